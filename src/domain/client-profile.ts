// Client profiles: one seed field that turns on a set of requirements. Everything a profile
// changes is decided here, once; the client store applies `withProfile` to every client it reads,
// so that every endpoint sees the effective client, and the few checks that are not client
// fields (signing algorithms, code lifetime) ask this module.
import type { Client, ClientProfile } from './types.js'

/** The profiles a client may name in its seed entry (`profile`). */
export const CLIENT_PROFILES = ['fapi2'] as const satisfies readonly ClientProfile[]

/** FAPI 2.0 Security Profile §5.4.1: PS256 and ES256 only, for every JWS the client signs. */
export const FAPI2_SIGNING_ALGS: readonly string[] = ['ES256', 'PS256']
/**
 * The algorithms ID tokens are signed with (discovery's id_token_signing_alg_values_supported):
 * RS256, which OpenID Connect Core §15.1 requires, and ES256 for the clients of a profile that
 * forbids RS256 (FAPI 2.0 Security Profile §5.4.1). The server always holds a key of each.
 */
export const ID_TOKEN_SIGNING_ALGS = ['RS256', 'ES256'] as const
/** FAPI 2.0 Security Profile §5.3.2.1 (item 14): an authorization code lives at most 60 seconds. */
export const FAPI2_MAX_CODE_LIFETIME_SECONDS = 60

/**
 * The effective client. FAPI 2.0 Security Profile §5.3.2 for `fapi2`: pushed authorization
 * requests (§5.3.2.2 item 2), PKCE (§5.3.2.2 item 4; S256 is the only method this server takes),
 * sender-constrained tokens by DPoP (§5.3.2.1 item 1) for every grant, and refresh tokens that
 * are not rotated (§5.3.2.1: rotation only in extraordinary circumstances; the client's own
 * authentication binds them, RFC 9700 §4.14.2), whatever refreshTokenUsage says. Confidential
 * clients only with private_key_jwt (§5.3.2.1 item 6; mTLS is not offered) is enforced by the
 * seed schema.
 */
export function withProfile(client: Client): Client {
  if (client.profile !== 'fapi2') return client
  return { ...client, requirePushedAuthorization: true, requirePkce: true, requireDPoP: true, refreshTokenUsage: 'reUse' }
}

/** The algorithms the client may sign with, narrowed from what the endpoint accepts. */
export function signingAlgsFor(client: Pick<Client, 'profile'> | undefined, accepted: readonly string[]): string[] {
  if (client?.profile !== 'fapi2') return [...accepted]
  return accepted.filter((alg) => FAPI2_SIGNING_ALGS.includes(alg))
}

/** The algorithm of the client's ID tokens. */
export function idTokenSigningAlgFor(client: Pick<Client, 'profile'>): (typeof ID_TOKEN_SIGNING_ALGS)[number] {
  return client.profile === 'fapi2' ? 'ES256' : 'RS256'
}

/** Seconds an authorization code issued to the client lives, given the server's setting. */
export function codeLifetimeFor(client: Pick<Client, 'profile'>, configured: number): number {
  return client.profile === 'fapi2' ? Math.min(configured, FAPI2_MAX_CODE_LIFETIME_SECONDS) : configured
}
