// The invalid_client answers of both authenticators in src/client-auth/authenticators.ts, with throttling
// (RFC 6749 §5.2: 401, WWW-Authenticate when the Authorization header was used; RFC 9110 §10.2.3
// Retry-After while the client and address are blocked).
import { OAuthError } from '../errors.js'
import type { ClientAuthFailure, ClientAuthThrottle } from './throttle.js'
import type { PresentedCredentials } from './credentials.js'

/**
 * invalid_client answers with throttling (src/client-auth/throttle.ts): a blocked pair
 * is refused before any lookup or secret check; every failure is counted and logged; the answer
 * that starts a block, and every answer while it lasts, carries Retry-After.
 */
export function throttledFailures(throttle: ClientAuthThrottle, challenge: Record<string, string>, description: string) {
  const error = (viaHeader: boolean, retryAfter: number, text = description) =>
    new OAuthError('invalid_client', text, {
      headers: { ...(viaHeader ? challenge : {}), ...(retryAfter > 0 ? { 'retry-after': String(retryAfter) } : {}) },
    })
  return {
    error,
    async refuseIfBlocked(creds: PresentedCredentials, address: string): Promise<void> {
      const pending = throttle.refreshIfStale()
      if (pending) await pending
      const wait = throttle.blockedFor(creds.id, address)
      if (wait === 0) return
      throttle.refused(creds.id, address, wait)
      throw error(creds.viaHeader, wait, 'too many failed client authentications from this address, retry later')
    },
    async failure(creds: PresentedCredentials, address: string, reason: Exclude<ClientAuthFailure, 'blocked'>): Promise<OAuthError> {
      return error(creds.viaHeader, await throttle.recordFailure(creds.id, address, reason))
    },
  }
}
