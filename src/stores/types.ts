// Store interfaces, named with domain verbs. They return undefined when nothing is found.
// Implementations live in src/stores/postgres/ (the only SQL in the project).
// Times are milliseconds since the epoch and always come from the caller (the injected Clock),
// never from SQL now(), so that tests control protocol time.
import type { ApiResource, ApiScope, CibaRequest, Client, DeviceAuthorization, GrantKind, IdentityResource, PersistedGrant, User } from '../domain/types.js'
import type { SigningAlg } from '../config.js'

export interface ClientStore {
  findById(clientId: string): Promise<Client | undefined>
  list(): Promise<Client[]>
  /** Every origin that some enabled client lists in allowedCorsOrigins. */
  corsOrigins(): Promise<string[]>
  /** Deletes the client and its secrets; false when there was none. */
  remove(clientId: string): Promise<boolean>
  /** Adds a hashed secret; false when the client does not exist. */
  addSecret(clientId: string, secret: { valueHash: string; expiresAt?: number; description?: string }): Promise<boolean>
  /** Enables or disables the client (admin CLI); false when it does not exist. */
  setEnabled(clientId: string, enabled: boolean): Promise<boolean>
}

/** Everything scope validation needs, small enough to keep in memory. */
export interface ResourceCatalogue {
  apiScopes: Map<string, ApiScope>
  apiResources: Map<string, ApiResource>
  identityResources: Map<string, IdentityResource>
}

export interface ResourceStore {
  loadCatalogue(): Promise<ResourceCatalogue>
  findApiResource(name: string): Promise<ApiResource | undefined>
}

export interface UserStore {
  findBySubjectId(subjectId: string): Promise<User | undefined>
  /** Whether the user with this subject is enabled; undefined when there is none (the token check's cheap lookup). */
  isEnabled(subjectId: string): Promise<boolean | undefined>
  findByUsername(username: string): Promise<User | undefined>
  /** CIBA login_hint: a username, a subject id or an e-mail address (case-insensitive). */
  findByLoginHint(hint: string): Promise<User | undefined>
  /** Creates or replaces the user with this username (admin CLI). */
  upsert(user: User): Promise<void>
  /** Every user by username (admin CLI). */
  list(): Promise<User[]>
  /** Enables or disables the user; false when there is no such username. */
  setEnabled(username: string, enabled: boolean): Promise<boolean>
  /** Deletes the user (sessions and consents go with it); false when there is none. */
  remove(username: string): Promise<boolean>
}

export interface NewGrant {
  /** The raw handle; the store keeps only its hash. For jwt_access_token: the jti. */
  handle: string
  kind: GrantKind
  clientId: string
  subjectId: string | undefined
  familyId: string
  data: Record<string, unknown>
  createdAt: number
  expiresAt: number | undefined
}

/** A grant issued into a family: the family is named once, by GrantStore.issueIntoFamily. */
export type FamilyGrant = Omit<NewGrant, 'familyId'>

/** What revoking a family took with it. */
export interface RevokedFamily {
  /** Rows deleted: every token of the family still stored. */
  removed: number
  /** The family's unexpired JWT access tokens, now in revoked_tokens (every replica hears of them). */
  revokedJtis: Array<{ jti: string; expiresAt: number }>
}

export interface GrantStore {
  /**
   * Stores one grant without looking at its family: a client_credentials reference token (its own
   * family), or a one-time artefact (authorization or device code) before anything is issued
   * from it. Tokens issued into a family go through issueIntoFamily instead.
   */
  store(grant: NewGrant): Promise<void>
  /** Looks a handle up by its hash, whatever its state. */
  find(handle: string, kind?: GrantKind): Promise<PersistedGrant | undefined>
  /**
   * Single use in one statement: marks the grant consumed and returns it, or returns undefined
   * when it does not exist, is of another kind, or was consumed already.
   */
  consume(handle: string, kind: GrantKind, at: number): Promise<PersistedGrant | undefined>
  /** Removes one grant (revocation of a reference token); false when none. */
  remove(handle: string, kind: GrantKind, clientId: string): Promise<boolean>
  /**
   * Stores every grant of one issuance into a family in one statement, unless the family has been
   * revoked: then nothing is stored and the answer is false. Excludes revokeFamily (both lock the
   * family's row): a revocation either sees and deletes these grants, or this call sees it.
   * Creates the family at its first issuance; `at` is then its creation time.
   */
  issueIntoFamily(familyId: string, grants: FamilyGrant[], at: number): Promise<boolean>
  /**
   * Revokes everything issued from one grant, in one transaction: marks the family revoked (so
   * nothing can be issued into it any more), deletes its rows and records the jti of each
   * unexpired JWT access token in it as revoked.
   */
  revokeFamily(familyId: string, at: number): Promise<RevokedFamily>
  /** Deletes grants that expired before `before`, at most `limit` rows; returns how many. */
  removeExpired(before: number, limit: number): Promise<number>
  /** Deletes families whose every token expired before `before`, at most `limit`; returns how many. */
  removeExpiredFamilies(before: number, limit: number): Promise<number>
}

export interface RevocationStore {
  /** Records a revoked JWT access token until its expiry and tells every replica (NOTIFY). */
  revoke(entry: { jti: string; clientId: string; expiresAt: number; revokedAt: number }): Promise<void>
  /** All revocations still in force at `now`: the replica's in-memory set is rebuilt from this. */
  listActive(now: number): Promise<Array<{ jti: string; expiresAt: number }>>
  /**
   * Calls `onRevoked` for every revocation committed by any replica, and with `undefined` after the
   * subscription was re-established (some may have been missed: reload). Resolves to an unsubscribe.
   */
  subscribe(onRevoked: (entry: { jti: string; expiresAt: number } | undefined) => void): Promise<() => Promise<void>>
  removeExpired(before: number, limit: number): Promise<number>
}

export type NewCibaRequest = Omit<CibaRequest, 'status' | 'approvedScopes' | 'authTime' | 'lastPolledAt' | 'decidedAt' | 'consumedAt'> & {
  /** The raw auth_req_id; the store keeps only its hash. */
  authReqId: string
}

export type CibaDecision = { status: 'approved'; approvedScopes: string[]; authTime: number } | { status: 'denied' }

/** What a poll of a pending grant (CIBA request, device code) did: see PolledGrantStore.recordPoll. */
export interface PollRecord {
  accepted: boolean
  intervalSeconds: number
}

/**
 * The polling side of a grant a client polls for (OpenID CIBA Core §11, RFC 8628 §3.5); the
 * token grants share its rules (src/grants/polling.ts).
 */
export interface PolledGrantStore<R> {
  /**
   * The throttle in one statement: a poll at least `interval` seconds after the last accepted
   * one (or the first poll) is accepted and stamped; a sooner one is refused, does not move the
   * stamp, and grows the stored interval by 5 s. undefined when the row is gone.
   */
  recordPoll(id: string, now: number): Promise<PollRecord | undefined>
  /** Single use: marks an approved, unexpired, unconsumed row consumed; undefined otherwise. */
  consume(id: string, now: number): Promise<R | undefined>
}

/** CIBA requests. Every state change is one SQL statement (DESIGN.md data rules). */
export interface CibaRequestStore {
  create(req: NewCibaRequest): Promise<void>
  findByAuthReqId(authReqId: string): Promise<CibaRequest | undefined>
  findById(id: string): Promise<CibaRequest | undefined>
  /** Pending, unexpired requests, oldest first (operators' `authz ciba list`). */
  listPending(now: number, limit: number): Promise<CibaRequest[]>
  /**
   * Creates the request unless `maxPending` (> 0; 0: no cap) pending, unexpired requests of the same
   * client for the same user exist at `now`; false when refused. Concurrent calls for one client
   * and user are serialized, so the cap holds exactly.
   */
  createWithinLimit(req: NewCibaRequest, maxPending: number, now: number): Promise<boolean>
  /** CIBA §11 throttle (PolledGrantStore.recordPoll). */
  recordPoll(id: string, now: number): Promise<PollRecord | undefined>
  /** Approves or denies, only while pending and unexpired; the updated request, or undefined. */
  decide(id: string, decision: CibaDecision, now: number): Promise<CibaRequest | undefined>
  /** Single use: marks an approved, unexpired, unconsumed request consumed; undefined otherwise. */
  consume(id: string, now: number): Promise<CibaRequest | undefined>
  /** Deletes requests that expired before `before`, at most `limit` rows; returns how many. */
  removeExpired(before: number, limit: number): Promise<number>
}

export type NewDeviceAuthorization = Pick<DeviceAuthorization, 'id' | 'clientId' | 'requestedScopes' | 'intervalSeconds' | 'familyId' | 'createdAt' | 'expiresAt'> & {
  /** The raw device_code; only its hash is stored. */
  deviceCode: string
  /** The normalized user code (RFC 8628 §6.1); only its hash is stored. */
  userCode: string
  /** Who asked: the caller's address as a throttle unit (src/domain/address.ts), for the per-address cap. */
  requesterAddress?: string
}

export type DeviceDecision = { status: 'approved'; subjectId: string; approvedScopes: string[]; authTime: number; amr: string[] } | { status: 'denied' }

export type DeviceCreateResult = { kind: 'created' } | { kind: 'code-taken' } | { kind: 'full'; per: 'client' | 'address'; oldestExpiresAt: number }

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

/** A sign-in session (migrations/0009_sessions.sql), as its store returns it. */
export interface StoredSession {
  /** Public session id (OIDC `sid`, logout); not a secret. */
  sid: string
  subjectId: string
  /** The user's username, read with the session (pages say who is signed in). */
  username: string
  /** When the person signed in (ms): the `auth_time` of what is issued in this session. */
  authTime: number
  /** How the person signed in (RFC 8176 values, e.g. ['pwd']). */
  amr: string[]
  /** Clients used in this session, in first-use order (for logout). */
  clientIds: string[]
  /** The idle deadline (ms): the session ends then unless it is used again. */
  expiresAt: number
  /** The absolute end (ms). */
  endsAt: number
}

export interface NewSession {
  /** The raw handle (the cookie value); the store keeps only its hash. */
  handle: string
  sid: string
  subjectId: string
  authTime: number
  amr: string[]
  createdAt: number
  expiresAt: number
  endsAt: number
}

/** Why a session ended: the person signed out, a new sign-in replaced it, or an administrator ended it. */
export type SessionEndReason = 'logout' | 'replaced' | 'admin'

export interface SessionEnd {
  reason: SessionEndReason
  /** ms: when (the queued logouts are due then). */
  at: number
}

/** One queued back-channel logout (OpenID Connect Back-Channel Logout 1.0 §2.5), as claimed for an attempt. */
export interface LogoutDelivery {
  id: string
  clientId: string
  subjectId: string
  sid: string | undefined
  reason: SessionEndReason
  /** Attempts so far, this one included. */
  attempts: number
}

/** How an attempt ended, as recorded. */
export interface LogoutAttemptRecord {
  /** ms */
  at: number
  /** A fixed word: timeout, connection_failed, http_status, … */
  error?: string | undefined
  httpStatus?: number | undefined
}

/**
 * The back-channel logout outbox (migrations/0020_backchannel_logout.sql). Rows are queued by
 * UserSessionStore when a session ends; a worker claims due rows under a lease, so that no two
 * workers (replicas) send one row at the same time, and records each attempt's outcome. A record
 * applies only while the claim is the latest one (same attempt count): a worker whose lease ran
 * out cannot overwrite a later attempt's outcome.
 */
export interface BackchannelLogoutStore {
  /**
   * Claims at most `limit` pending rows due at `now` and not leased, leasing them until
   * `leaseUntil` (ms), and no row of a client that already has `perClient` rows leased.
   */
  claimDue(now: number, leaseUntil: number, limit: number, perClient: number): Promise<LogoutDelivery[]>
  /** Final outcome: delivered or failed; the row is removed by the cleanup after `expiresAt`. */
  finish(d: LogoutDelivery, status: 'delivered' | 'failed', r: LogoutAttemptRecord & { expiresAt: number }): Promise<boolean>
  /** A failed attempt to be retried at `nextAttemptAt` (ms). */
  retry(d: LogoutDelivery, nextAttemptAt: number, r: LogoutAttemptRecord): Promise<boolean>
  /** An attempt cut short by shutdown: not counted, due again at once (for another replica). */
  release(d: LogoutDelivery): Promise<boolean>
  /** When the next pending row is due (ms; a leased one when its lease ends), or undefined. */
  nextDue(): Promise<number | undefined>
  /** Calls `onQueued` when any replica (or the CLI) queues logouts; resolves to an unsubscribe function. */
  subscribe(onQueued: () => void): Promise<() => Promise<void>>
  removeExpired(before: number, limit: number): Promise<number>
}

/** Sign-in sessions; the handle is stored only as a hash. Each method is one statement. */
export interface UserSessionStore {
  create(s: NewSession): Promise<void>
  /**
   * The session for this handle if it is alive at `now` (before both deadlines) and its user is
   * enabled; its idle deadline moves to min(now + idleSeconds, endsAt) in the same statement.
   */
  use(handle: string, now: number, idleSeconds: number): Promise<StoredSession | undefined>
  /**
   * Deletes the session and, in the same statement, queues a back-channel logout for each client
   * used in it that has a backChannelLogoutUri; returns the session as it was (undefined when
   * there was none).
   */
  remove(handle: string, end: SessionEnd): Promise<StoredSession | undefined>
  /** Ends every session of the subject (an administrator's sign-out), queuing their logouts the same way; returns how many. */
  removeAllForSubject(subjectId: string, end: SessionEnd): Promise<number>
  /** Adds a client to the session's list (once); false when the session is gone. */
  addClient(sid: string, clientId: string): Promise<boolean>
  removeExpired(before: number, limit: number): Promise<number>
}

/** Server-wide secrets shared by every replica (table server_secrets). */
export interface ServerSecretStore {
  /**
   * The stored secret `name`; when there is none, stores `candidate` first. Replicas starting
   * together all get the one that was stored first.
   */
  ensure(name: string, candidate: { value: string; encrypted: boolean; createdAt: number }): Promise<{ value: string; encrypted: boolean }>
  /** Replaces the plaintext value of `name` with its encrypted form (no-op once encrypted). */
  storeEncrypted(name: string, encryptedValue: string): Promise<void>
}

/** A user's remembered consent for one client (OpenID Connect Core §3.1.2.4). */
export interface Consent {
  subjectId: string
  clientId: string
  /** In the order first granted. */
  scopes: string[]
  createdAt: number
  /** The last time the user granted (any of) these scopes. */
  updatedAt: number
}

/** Consents, per user and client, until revoked. */
export interface ConsentStore {
  /**
   * Adds `scopes` to the user's consent for the client in one statement (a union with what is
   * stored), creating it when there is none; returns the consent as stored.
   */
  grant(subjectId: string, clientId: string, scopes: string[], at: number): Promise<Consent>
  find(subjectId: string, clientId: string): Promise<Consent | undefined>
  /** The user's consents, by client id. */
  list(subjectId: string): Promise<Consent[]>
  /** Removes the consent for one client, or for every client when clientId is omitted; returns how many. */
  revoke(subjectId: string, clientId?: string): Promise<number>
}

/** jti values already seen per client (request-object replay protection). */
export interface UsedJtiStore {
  /** Records the jti; false when it is already recorded and not yet expired at `now`. */
  use(clientId: string, jti: string, expiresAt: number, now: number): Promise<boolean>
  removeExpired(before: number, limit: number): Promise<number>
}

/** A row of signing_keys. privateJwk is JSON text, or v1.<iv>.<tag>.<data> when encrypted. */
export interface StoredSigningKey {
  kid: string
  alg: SigningAlg
  publicJwk: Record<string, unknown>
  privateJwk: string
  encrypted: boolean
  createdAt: number
  activateAt: number
  retireAt: number | undefined
}

/** Writes allowed inside SigningKeyStore.locked(): one transaction, one replica at a time. */
export interface SigningKeyWriter {
  /** Algorithms that have a key not scheduled for retirement (the newest key of each alg). */
  unretiredAlgs(): Promise<SigningAlg[]>
  insert(key: StoredSigningKey): Promise<void>
  /** Schedules retirement of every other key of `alg` that has none scheduled; returns how many. */
  retireOthers(alg: SigningAlg, keepKid: string, retireAt: number): Promise<number>
  /** The longest access_token_lifetime any client has (seconds), undefined when none sets one. */
  maxClientAccessTokenLifetime(): Promise<number | undefined>
  /** Keys whose private part is stored unencrypted. */
  plaintextKeys(): Promise<Array<{ kid: string; privateJwk: string }>>
  /** Replaces a plaintext private part with its encrypted form (no-op once encrypted). */
  storeEncrypted(kid: string, encryptedJwk: string): Promise<void>
}

export interface SigningKeyStore {
  /** Every key, or only those still published at `publishedAt` (retire_at unset or later). */
  list(publishedAt?: number): Promise<StoredSigningKey[]>
  /** Runs fn in one transaction under an advisory lock, so replicas never create or rotate keys twice. */
  locked<T>(fn: (w: SigningKeyWriter) => Promise<T>): Promise<T>
  /** Deletes at most `limit` keys retired (unpublished) before `before`; returns their kids. */
  removeRetired(before: number, limit: number): Promise<string[]>
}

/** What a failure counter counts (migrations/0003_failure_counters.sql). */
export type FailureKind = 'user' | 'client' | 'user_code' | 'device_user_code'

export interface FailureKey {
  kind: FailureKind
  /** The subject id ('user', 'user_code'), the client id / API name ('client') or the address ('device_user_code'). */
  name: string
  /** '' ('user'; 'unknown-username' when name is a username no account has), the source address ('client') or the client id ('user_code'). */
  source: string
}

/** When to block and for how long: `limit` failures in a row block for base·2^(blocks so far), capped at max. */
export interface FailurePolicy {
  limit: number
  baseSeconds: number
  /** The longest block; also how long a counter without a new failure is remembered. */
  maxSeconds: number
}

export type FailureRecord =
  /** Counted; blockedUntil is set when this failure started a block. */
  | { counted: true; failures: number; blocks: number; blockedUntil: number | undefined }
  /** Not counted: a block is in force (blockedUntil undefined when a concurrent writer set it just now). */
  | { counted: false; blockedUntil: number | undefined }

/** Failed-attempt counters shared by every replica. Every change is one SQL statement. */
export interface FailureCounterStore {
  /**
   * Counts one failure unless a block is in force, in one statement: the limit-th failure in a row
   * starts a block (failures back to 0, blocks + 1); concurrent callers never exceed the limit.
   */
  recordFailure(key: FailureKey, policy: FailurePolicy, now: number): Promise<FailureRecord>
  /** When the block in force at `now` ends, or undefined when there is none (a read; counts nothing). */
  blockedUntil(key: FailureKey, now: number): Promise<number | undefined>
  /**
   * Takes back the failure `counted` recorded (an attempt counted before it was known to be
   * right): one failure less, or, when that failure started the block, the block lifted and the
   * count back at limit - 1. Nothing when the counter moved on since (a later failure, a block).
   */
  forgive(key: FailureKey, counted: Extract<FailureRecord, { counted: true }>, policy: FailurePolicy): Promise<void>
  /** Forgets the counter (a success, or an administrator's unlock); false when there was none. */
  clear(key: FailureKey): Promise<boolean>
  /** Forgets every counter of these kinds for this name (`authz users unlock`); returns how many. */
  clearName(kinds: FailureKind[], name: string): Promise<number>
  /** Blocks in force at `now` of one kind, soonest ending last, at most `limit`. */
  listBlocked(kind: FailureKind, now: number, limit: number): Promise<Array<{ name: string; source: string; blockedUntil: number }>>
  removeExpired(before: number, limit: number): Promise<number>
}
