// Public clients (RFC 6749 §2.1: they cannot keep a secret; here `requireClientSecret: false`):
// browser apps, native and device apps. RFC 9700 §2.1.1 requires PKCE of them and §4.14.2 requires
// their refresh tokens to be sender-constrained or rotated with reuse detection; we do not
// sender-constrain, so they rotate. These rules hold whatever the client's record says: a seed
// that sets `requirePkce: false` or `refreshTokenUsage: reUse` on a public client is overridden
// (seed apply warns about it), not obeyed. One place decides, so no endpoint can forget one.
import type { Client } from './types.js'

export function isPublicClient(c: Pick<Client, 'requireClientSecret'>): boolean {
  return !c.requireClientSecret
}

/** RFC 7636 at the authorization endpoint and the authorization_code grant (RFC 9700 §2.1.1). */
export function requiresPkce(c: Pick<Client, 'requireClientSecret' | 'requirePkce'>): boolean {
  return c.requirePkce || isPublicClient(c)
}

/** Refresh tokens are one-time use, with reuse revoking the family (RFC 9700 §4.14.2). */
export function rotatesRefreshTokens(c: Pick<Client, 'requireClientSecret' | 'refreshTokenUsage'>): boolean {
  return c.refreshTokenUsage === 'oneTimeOnly' || isPublicClient(c)
}

/**
 * The absolute lifetime of a refresh token family, in seconds; undefined: no absolute bound
 * (absoluteRefreshTokenLifetime 0). A public client's is never longer than `publicCap`
 * (PUBLIC_CLIENT_REFRESH_TOKEN_LIFETIME): rotation detects a stolen token only once its owner uses
 * the token again, so a thief who refreshes first keeps the family alive until this bound.
 */
export function absoluteRefreshTokenLifetime(
  c: Pick<Client, 'requireClientSecret' | 'absoluteRefreshTokenLifetime'>,
  publicCap: number,
): number | undefined {
  const own = c.absoluteRefreshTokenLifetime > 0 ? c.absoluteRefreshTokenLifetime : undefined
  if (!isPublicClient(c)) return own
  return own === undefined ? publicCap : Math.min(own, publicCap)
}

/**
 * When a refresh token family began (ms), for the public cap: the start its tokens record, or for a
 * token stored before starts were recorded, the sign-in it came from (auth_time, seconds), which
 * is never later. Undefined: neither is known, and the cap counts from the next rotation.
 */
export function refreshFamilyStart(data: { startedAt?: number; claims?: Record<string, unknown> }): number | undefined {
  if (typeof data.startedAt === 'number') return data.startedAt
  const authTime = data.claims?.auth_time
  return typeof authTime === 'number' ? authTime * 1000 : undefined
}
