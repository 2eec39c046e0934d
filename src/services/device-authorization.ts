// RFC 8628 §3.1-3.2: the device authorization request. The client (authenticated as at the
// token endpoint; public clients too) asks for scopes; it gets a 256-bit device_code (stored
// only as a hash) to poll with, and a short user code (stored only as a hash, unique among the
// stored requests) that the person types at verification_uri, or follows verification_uri_complete.
import { randomBytes, randomUUID } from 'node:crypto'
import type { Config } from '../config.js'
import type { Clock } from '../domain/clock.js'
import type { Client } from '../domain/types.js'
import { OAuthError } from '../errors.js'
import { DEVICE_CODE_GRANT } from '../grants/device-code.js'
import type { ScopeResolver } from '../grants/scopes.js'
import type { DeviceAuthorizationStore } from '../stores/types.js'
import { newHandle } from '../tokens/handles.js'
import { formatUserCode, newUserCode } from './device-user-code.js'

/** The device page, where the person types the code (RFC 8628 §3.2 verification_uri). */
export const DEVICE_PAGE_PATH = '/device'

export interface DeviceAuthorizationResponse {
  device_code: string
  user_code: string
  verification_uri: string
  verification_uri_complete: string
  expires_in: number
  interval: number
}

export interface DeviceAuthorizationDeps {
  config: Pick<Config, 'issuer' | 'deviceCodeLifetime' | 'devicePollingInterval'>
  clock: Clock
  devices: Pick<DeviceAuthorizationStore, 'create'>
  scopes: ScopeResolver
}

/** Draws before giving up: with 20^8 codes a second draw is already rare. */
const USER_CODE_ATTEMPTS = 5

export function createDeviceAuthorization(deps: DeviceAuthorizationDeps) {
  const { config, clock } = deps
  return {
    async start(client: Client, form: Record<string, string>): Promise<DeviceAuthorizationResponse> {
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
        const created = await deps.devices.create({
          id: randomBytes(16).toString('hex'), deviceCode, userCode, clientId: client.clientId, requestedScopes: granted.scopes,
          intervalSeconds: interval, familyId: randomUUID(), createdAt: now, expiresAt: now + lifetime * 1000,
        })
        if (!created) continue
        const shown = formatUserCode(userCode)
        const page = `${config.issuer}${DEVICE_PAGE_PATH}`
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

export type DeviceAuthorizationService = ReturnType<typeof createDeviceAuthorization>
