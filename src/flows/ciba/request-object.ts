// Client-signed JWTs at the CIBA endpoint, verified with the client's registered public keys
// (RFC 7591 `jwks` or `jwks_uri`, through src/client-auth/client-keys.ts): signed authentication
// request objects (CIBA Core §7.1.1) and login_hint_tokens (§7.1). Only asymmetric algorithms
// are accepted.
import { errors, jwtVerify, type JWSHeaderParameters } from 'jose'
import type { ClientKeyResolver } from '../../client-auth/client-keys.js'
import type { Clock } from '../../domain/clock.js'
import type { Client } from '../../domain/types.js'
import { OAuthError } from '../../errors.js'
import type { UsedJtiStore } from '../../stores/used-jtis.js'
import { checkNoControlCharacters, checkParameters, type ParameterErrorCodes } from '../../domain/input-limits.js'

export const REQUEST_OBJECT_ALGS = ['ES256', 'PS256', 'RS256'] as const

/** The authentication request parameters (CIBA Core §7.1); a request object carries them as claims (§7.1.1). */
export const CIBA_AUTH_PARAMS = [
  'scope',
  'client_notification_token',
  'acr_values',
  'login_hint_token',
  'id_token_hint',
  'login_hint',
  'binding_message',
  'user_code',
  'requested_expiry',
  'resource',
] as const
/**
 * CIBA Core §13: at this endpoint an unacceptable binding_message is invalid_binding_message, in the
 * form and in a request object alike; at every other endpoint it is an unknown parameter.
 */
export const CIBA_PARAMETER_ERRORS: ParameterErrorCodes = new Map([['binding_message', 'invalid_binding_message']])
/** A request object or login_hint_token may live at most this long (FAPI's 60 minutes for request objects). */
const MAX_CLIENT_JWT_LIFETIME = 3600
const CLOCK_TOLERANCE = 30

export interface ClientJwtVerifierDeps {
  clock: Clock
  issuer: string
  usedJtis: UsedJtiStore
  keys: ClientKeyResolver
}

export interface ClientJwtVerifier {
  /** CIBA §7.1.1: the authentication request parameters carried by a signed request object. */
  requestObject(client: Client, jwt: string): Promise<Record<string, string>>
  /** CIBA §7.1 login_hint_token: the user it names (its `sub`, else its `login_hint` claim). */
  loginHintToken(client: Client, jwt: string): Promise<string>
}

/** A parameter value from a request object as the string the form would have carried. */
function asParam(name: (typeof CIBA_AUTH_PARAMS)[number], value: unknown): string {
  if (typeof value === 'string') return value
  if (name === 'requested_expiry' && typeof value === 'number') return String(value)
  throw new OAuthError('invalid_request', `invalid request object: ${name} must be a string`)
}

/** RFC 9101 §10.8: the media type a request object may declare in its typ header. */
const REQUEST_OBJECT_TYP = 'oauth-authz-req+jwt'

export function createClientJwtVerifier(deps: ClientJwtVerifierDeps): ClientJwtVerifier {
  function keySet(client: Client, what: string) {
    if (!deps.keys.hasKeys(client)) throw new OAuthError('invalid_request', `${what}: the client has no registered public keys`)
    return (header: JWSHeaderParameters) => deps.keys.resolve(client, header)
  }

  /**
   * Signature with one of the client's keys, our issuer as aud, the claims every client JWT needs,
   * a usable jti and a lifetime of at most an hour (counted from iat or nbf, or from now).
   */
  async function verify(client: Client, jwt: string, what: string, requiredClaims: string[]) {
    let result
    try {
      result = await jwtVerify(jwt, keySet(client, what), {
        algorithms: [...REQUEST_OBJECT_ALGS],
        audience: deps.issuer,
        requiredClaims,
        currentDate: new Date(deps.clock.now()),
        clockTolerance: CLOCK_TOLERANCE,
      })
    } catch (err) {
      if (err instanceof OAuthError) throw err
      if (err instanceof errors.JWTExpired && what === 'invalid login_hint_token') {
        throw new OAuthError('expired_login_hint_token', 'the login_hint_token has expired')
      }
      throw new OAuthError('invalid_request', `${what}: ${describe(err)}`, { cause: err })
    }
    const { payload } = result
    if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 200) {
      throw new OAuthError('invalid_request', `${what}: jti must be a non-empty string`)
    }
    checkNoControlCharacters(payload.jti, `${what}: jti`)
    const starts = [payload.iat, payload.nbf].filter((v): v is number => typeof v === 'number')
    const from = Math.min(...starts, Math.floor(deps.clock.now() / 1000))
    if (payload.exp! - from > MAX_CLIENT_JWT_LIFETIME) {
      throw new OAuthError('invalid_request', `${what}: lifetime over ${MAX_CLIENT_JWT_LIFETIME} seconds`)
    }
    return { ...result, jti: payload.jti }
  }

  /** A jti is used once per client, by whichever kind of JWT first carries it, until that JWT expires. */
  async function useOnce(client: Client, jti: string, exp: number, what: string) {
    const fresh = await deps.usedJtis.use(client.clientId, jti, (exp + CLOCK_TOLERANCE) * 1000, deps.clock.now())
    if (!fresh) throw new OAuthError('invalid_request', `${what}: jti already used`)
  }

  return {
    async requestObject(client, jwt) {
      const what = 'invalid request object'
      const { payload, jti } = await verify(client, jwt, what, ['iss', 'aud', 'exp', 'iat', 'nbf', 'jti'])
      if (payload.iss !== client.clientId) throw new OAuthError('invalid_request', `${what}: iss must be the client_id`)
      if (payload.client_id !== undefined && payload.client_id !== client.clientId) {
        throw new OAuthError('invalid_request', `${what}: client_id does not match`)
      }
      // scope is required (§7.1), so a request object always has one: what tells it from a login_hint_token.
      if (payload.scope === undefined) throw new OAuthError('invalid_request', `${what}: scope is required`)
      const params: Record<string, string> = {}
      // Other claims (iss, aud, exp, jti…, or unknown ones) are not parameters; unknown ones are ignored.
      for (const name of CIBA_AUTH_PARAMS) {
        const value = payload[name]
        if (value !== undefined && value !== null) params[name] = asParam(name, value)
      }
      checkParameters(params, '', CIBA_PARAMETER_ERRORS) // what the form reader checks for the parameters of a form
      await useOnce(client, jti, payload.exp!, what) // §7.1.1: jti is never reused
      return params
    },

    async loginHintToken(client, jwt) {
      const what = 'invalid login_hint_token'
      const { payload, protectedHeader, jti } = await verify(client, jwt, what, ['exp', 'aud', 'jti'])
      // A request object carries the request (scope at least) or says what it is in typ; a
      // login_hint_token names a user and nothing else.
      const isRequestObject =
        protectedHeader.typ?.toLowerCase() === REQUEST_OBJECT_TYP || CIBA_AUTH_PARAMS.some((p) => p !== 'login_hint' && p in payload)
      if (isRequestObject) throw new OAuthError('invalid_request', `${what}: a request object is not a login_hint_token`)
      const claim = typeof payload.sub === 'string' ? 'sub' : 'login_hint'
      const hint = payload[claim]
      if (typeof hint !== 'string' || hint === '') throw new OAuthError('invalid_request', `${what}: it names no user (sub or login_hint)`)
      checkNoControlCharacters(hint, `${what}: ${claim}`)
      await useOnce(client, jti, payload.exp!, what)
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
