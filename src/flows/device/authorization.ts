// RFC 8628 §3.1-3.2: the device authorization request. The client (authenticated as at the
// token endpoint; public clients too) asks for scopes; it gets a 256-bit device_code (stored
// only as a hash) to poll with, and a short user code (stored only as a hash, unique among the
// stored requests) that the person types at verification_uri, or follows verification_uri_complete.
import { randomBytes, randomUUID } from 'node:crypto'
import type { Config } from '../../config.js'
import { throttleAddress } from '../../domain/address.js'
import type { Clock } from '../../domain/clock.js'
import type { Client } from '../../domain/types.js'
import { OAuthError } from '../../errors.js'
import { DEVICE_CODE_GRANT } from './grant.js'
import type { ScopeResolver } from '../../grants/scopes.js'
import type { DeviceAuthorizationStore } from '../../stores/device-authorizations.js'
import { newHandle } from '../../tokens/handles.js'
import { formatUserCode, newUserCode } from './user-code.js'
import { DEVICE_PATH } from '../../endpoints.js'

export interface DeviceAuthorizationResponse {
  device_code: string
  user_code: string
  verification_uri: string
  verification_uri_complete: string
  expires_in: number
  interval: number
}

export interface DeviceAuthorizationDeps {
  config: Pick<
    Config,
    'issuer' | 'deviceCodeLifetime' | 'devicePollingInterval' | 'deviceMaxPendingPerClient' | 'deviceMaxPendingPerAddress'
  >
  clock: Clock
  devices: Pick<DeviceAuthorizationStore, 'createWithinLimit'>
  scopes: ScopeResolver
}

/** Draws before giving up: with 20^8 codes a second draw is already rare. */
const USER_CODE_ATTEMPTS = 5

/**
 * The answer when the client already has DEVICE_MAX_PENDING_PER_CLIENT pending requests. RFC 8628
 * §3.2 answers errors as RFC 6749 §5.2, whose codes all blame the request or the client's
 * credentials; none fits a request that is fine but comes when the client has too many open.
 * §3.5's slow_down and authorization_pending are answers to polling at the token endpoint, and its
 * access_denied means the person said no (CIBA's cap may answer access_denied because CIBA §13
 * gives that code to its own endpoint; here a device would tell its user they refused). So:
 * temporarily_unavailable (RFC 6749 §4.1.2.1, the code the OAuth registry has for "retry later",
 * and what this endpoint already answers to a database outage), with 429 (RFC 6585 §4: this
 * client sent too many, the server is fine) and Retry-After set to when the client's oldest
 * pending request expires, by when a place has freed at the latest. The same when the caller's
 * address already has DEVICE_MAX_PENDING_PER_ADDRESS pending requests of this client (Retry-After:
 * when the oldest of those expires): that cap keeps one address from taking all the client's places.
 */
function tooManyPending(per: 'client' | 'address', retryAfterSeconds: number): OAuthError {
  const whose = per === 'client' ? 'this client' : 'this client from this address'
  return new OAuthError('temporarily_unavailable', `too many pending device authorizations for ${whose}, retry later`, {
    status: 429,
    headers: { 'retry-after': String(retryAfterSeconds) },
  })
}

export interface DeviceAuthorizationService {
  start(client: Client, form: Record<string, string>, address: string): Promise<DeviceAuthorizationResponse>
}

export function createDeviceAuthorization(deps: DeviceAuthorizationDeps): DeviceAuthorizationService {
  const { config, clock } = deps
  return {
    async start(client: Client, form: Record<string, string>, address: string): Promise<DeviceAuthorizationResponse> {
      if (!client.allowedGrantTypes.includes(DEVICE_CODE_GRANT)) {
        throw new OAuthError('unauthorized_client', 'the client may not use the device authorization grant')
      }
      // §3.1: scope as at the token endpoint; omitted, the client's API scopes.
      const granted = await deps.scopes.resolve(client, form.scope, { allowIdentity: true })
      const now = clock.now()
      const deviceCode = newHandle()
      const interval = client.pollingInterval ?? config.devicePollingInterval
      const lifetime = config.deviceCodeLifetime
      for (let i = 0; i < USER_CODE_ATTEMPTS; i++) {
        const userCode = newUserCode()
        const created = await deps.devices.createWithinLimit(
          {
            id: randomBytes(16).toString('hex'),
            deviceCode,
            userCode,
            clientId: client.clientId,
            requestedScopes: granted.scopes,
            intervalSeconds: interval,
            familyId: randomUUID(),
            createdAt: now,
            expiresAt: now + lifetime * 1000,
            requesterAddress: throttleAddress(address),
          },
          { perClient: config.deviceMaxPendingPerClient, perAddress: config.deviceMaxPendingPerAddress },
          now,
        )
        if (created.kind === 'full') throw tooManyPending(created.per, Math.max(1, Math.ceil((created.oldestExpiresAt - now) / 1000)))
        if (created.kind === 'code-taken') continue
        const shown = formatUserCode(userCode)
        const page = `${config.issuer}${DEVICE_PATH}`
        return {
          device_code: deviceCode,
          user_code: shown,
          verification_uri: page,
          verification_uri_complete: `${page}?user_code=${shown}`,
          expires_in: lifetime,
          interval,
        }
      }
      throw new OAuthError('temporarily_unavailable', 'no user code is free right now, retry later')
    },
  }
}
