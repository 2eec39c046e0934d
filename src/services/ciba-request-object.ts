// Client-signed JWTs at the CIBA endpoint, verified with the client's registered public keys
// (RFC 7591 `jwks`): signed authentication request objects (CIBA Core §7.1.1) and
// login_hint_tokens (§7.1). Client secrets are stored hashed, so HS256 can never be verified:
// only asymmetric algorithms are accepted.
import { createLocalJWKSet, errors, jwtVerify, type JWK, type JWTPayload } from 'jose'
import type { Clock } from '../domain/clock.js'
import type { Client } from '../domain/types.js'
import { OAuthError } from '../errors.js'
import type { UsedJtiStore } from '../stores/types.js'

export const REQUEST_OBJECT_ALGS = ['ES256', 'PS256', 'RS256'] as const

/** Claims of a request object that are about the JWT itself, not authentication parameters. */
const JWT_CLAIMS = new Set(['iss', 'aud', 'exp', 'iat', 'nbf', 'jti', 'sub', 'client_id'])
/** A request object may live at most this long (FAPI's 60 minutes). */
const MAX_REQUEST_OBJECT_LIFETIME = 3600
const CLOCK_TOLERANCE = 30

export interface ClientJwtVerifierDeps {
  clock: Clock
  issuer: string
  usedJtis: UsedJtiStore
}

export interface ClientJwtVerifier {
  /** CIBA §7.1.1: the authentication request parameters carried by a signed request object. */
  requestObject(client: Client, jwt: string): Promise<Record<string, string>>
  /** CIBA §7.1 login_hint_token: the user it names (its `sub`, else its `login_hint` claim). */
  loginHintToken(client: Client, jwt: string): Promise<string>
}

function keySet(client: Client, what: string) {
  if (!client.jwks || client.jwks.keys.length === 0) {
    throw new OAuthError('invalid_request', `${what}: the client has no registered public keys`)
  }
  return createLocalJWKSet({ keys: client.jwks.keys as JWK[] })
}

/** A parameter value from a request object as the string the form would have carried. */
function asParam(name: string, value: unknown): string {
  if (typeof value === 'string') return value
  if (name === 'requested_expiry' && typeof value === 'number') return String(value)
  throw new OAuthError('invalid_request', `invalid request object: ${/^[a-z_]{1,40}$/.test(name) ? name : 'a claim'} must be a string`)
}

export function createClientJwtVerifier(deps: ClientJwtVerifierDeps): ClientJwtVerifier {
  const verify = (client: Client, jwt: string, what: string, opts: { audience?: string; requiredClaims?: string[] }) =>
    jwtVerify(jwt, keySet(client, what), {
      algorithms: [...REQUEST_OBJECT_ALGS],
      currentDate: new Date(deps.clock.now()),
      clockTolerance: CLOCK_TOLERANCE,
      ...opts,
    })

  return {
    async requestObject(client, jwt) {
      let payload: JWTPayload
      try {
        ;({ payload } = await verify(client, jwt, 'invalid request object', {
          audience: deps.issuer,
          requiredClaims: ['iss', 'aud', 'exp', 'iat', 'nbf', 'jti'],
        }))
      } catch (err) {
        if (err instanceof OAuthError) throw err
        throw new OAuthError('invalid_request', `invalid request object: ${describe(err)}`, { cause: err })
      }
      if (payload.iss !== client.clientId) throw new OAuthError('invalid_request', 'invalid request object: iss must be the client_id')
      if (payload.client_id !== undefined && payload.client_id !== client.clientId) {
        throw new OAuthError('invalid_request', 'invalid request object: client_id does not match')
      }
      if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 200) {
        throw new OAuthError('invalid_request', 'invalid request object: jti must be a non-empty string')
      }
      if (payload.exp! - Math.min(payload.iat!, payload.nbf!) > MAX_REQUEST_OBJECT_LIFETIME) {
        throw new OAuthError('invalid_request', 'invalid request object: lifetime over 3600 seconds')
      }
      // jti is never reused: remembered until the object expires (CIBA §7.1.1).
      const fresh = await deps.usedJtis.use(client.clientId, payload.jti, (payload.exp! + CLOCK_TOLERANCE) * 1000, deps.clock.now())
      if (!fresh) throw new OAuthError('invalid_request', 'invalid request object: jti already used')
      const params: Record<string, string> = {}
      for (const [name, value] of Object.entries(payload)) {
        if (!JWT_CLAIMS.has(name) && value !== undefined && value !== null) params[name] = asParam(name, value)
      }
      return params
    },

    async loginHintToken(client, jwt) {
      let payload: JWTPayload
      try {
        ;({ payload } = await verify(client, jwt, 'invalid login_hint_token', {}))
      } catch (err) {
        if (err instanceof OAuthError) throw err
        if (err instanceof errors.JWTExpired) throw new OAuthError('expired_login_hint_token', 'the login_hint_token has expired')
        throw new OAuthError('invalid_request', `invalid login_hint_token: ${describe(err)}`, { cause: err })
      }
      const hint = typeof payload.sub === 'string' ? payload.sub : payload.login_hint
      if (typeof hint !== 'string' || hint === '') {
        throw new OAuthError('invalid_request', 'invalid login_hint_token: it names no user (sub or login_hint)')
      }
      return hint
    },
  }
}

/** A fixed, printable reason (never the token or the library's message with its contents). */
function describe(err: unknown): string {
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'signature verification failed'
  if (err instanceof errors.JWKSNoMatchingKey) return 'no registered key matches'
  if (err instanceof errors.JOSEAlgNotAllowed) return 'algorithm not allowed (use ES256, PS256 or RS256)'
  if (err instanceof errors.JWTExpired) return 'expired'
  if (err instanceof errors.JWTClaimValidationFailed) {
    return /^[a-z_]{1,20}$/.test(err.claim) ? `${err.claim} claim ${err.reason === 'missing' ? 'missing' : 'invalid'}` : 'claim invalid'
  }
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return 'malformed'
  return 'not verifiable'
}
