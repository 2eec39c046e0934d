// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (device-authorizations.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.
import type { DeviceAuthorization, SignInRecord } from '../domain/types.js'
import type { PolledGrantStore } from './polling.js'

export type NewDeviceAuthorization = Pick<
  DeviceAuthorization,
  'id' | 'clientId' | 'requestedScopes' | 'intervalSeconds' | 'familyId' | 'createdAt' | 'expiresAt'
> & {
  /** The raw device_code; only its hash is stored. */
  deviceCode: string
  /** The normalized user code (RFC 8628 §6.1); only its hash is stored. */
  userCode: string
  /** Who asked: the caller's address as a throttle unit (src/domain/address.ts), for the per-address cap. */
  requesterAddress?: string
}

/** Approved: who, what, and the approver's sign-in (authTime in ms, amr, idp). */
export type DeviceDecision = ({ status: 'approved'; subjectId: string; approvedScopes: string[] } & SignInRecord) | { status: 'denied' }

export type DeviceCreateResult =
  { kind: 'created' } | { kind: 'code-taken' } | { kind: 'full'; per: 'client' | 'address'; oldestExpiresAt: number }

/** Caps on pending device authorizations (0: no cap): per client, and per client and requesterAddress. */
export interface DevicePendingLimits {
  perClient: number
  perAddress: number
}

/** RFC 8628 device authorization requests. Every state change is one SQL statement. */
export interface DeviceAuthorizationStore extends PolledGrantStore<DeviceAuthorization> {
  /** Stores the request; false when its user code is taken (the caller draws another). */
  create(req: NewDeviceAuthorization): Promise<boolean>
  /**
   * As create, unless `limits.perClient` pending, unexpired requests of the same client exist at
   * `now`, or `limits.perAddress` of the same client from the same requesterAddress: then `full`
   * (`per` saying which), with when the oldest of those expires (a place frees by then at the
   * latest). Concurrent calls for one client are serialized, so neither cap is ever exceeded.
   */
  createWithinLimit(req: NewDeviceAuthorization, limits: DevicePendingLimits, now: number): Promise<DeviceCreateResult>
  findByDeviceCode(deviceCode: string): Promise<DeviceAuthorization | undefined>
  /** By the normalized user code. */
  findByUserCode(userCode: string): Promise<DeviceAuthorization | undefined>
  /** The request with this id, only if the normalized user code is its own. */
  findByIdAndUserCode(id: string, userCode: string): Promise<DeviceAuthorization | undefined>
  /** Approves or denies, only while pending and unexpired; the updated request, or undefined. */
  decide(id: string, decision: DeviceDecision, now: number): Promise<DeviceAuthorization | undefined>
  removeExpired(before: number, limit: number): Promise<number>
}
