// The logout token (OpenID Connect Back-Channel Logout 1.0 §2.4): a JWT signed with the key ID
// tokens use, typed logout+jwt (§4.1: explicit typing, so that it can never pass for an ID token
// or an access token, nor one of those for it). Claims: iss, aud, iat, exp (short), jti, events,
// sub and sid; never a nonce (§2.4: its absence keeps a logout token from passing as an ID token).
import { randomBytes } from 'node:crypto'
import type { SigningKeyService } from '../../keys/signing-keys.js'

export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout'
export const LOGOUT_TOKEN_TYP = 'logout+jwt'
/** Seconds: long enough for one delivery attempt; every retry signs a new token. */
export const LOGOUT_TOKEN_LIFETIME = 120

export interface LogoutTokenClaims {
  issuer: string
  clientId: string
  subjectId: string
  sid: string | undefined
  /** ms */
  now: number
}

export async function signLogoutToken(keys: Pick<SigningKeyService, 'sign'>, c: LogoutTokenClaims): Promise<string> {
  const iat = Math.floor(c.now / 1000)
  return keys.sign(
    {
      iss: c.issuer,
      sub: c.subjectId,
      aud: c.clientId,
      iat,
      exp: iat + LOGOUT_TOKEN_LIFETIME,
      jti: randomBytes(16).toString('base64url'),
      events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
      ...(c.sid !== undefined ? { sid: c.sid } : {}),
    },
    // Signed as ID tokens are (src/tokens/issuer.ts): the RP verifies both with one key set.
    { alg: 'RS256', typ: LOGOUT_TOKEN_TYP },
  )
}
