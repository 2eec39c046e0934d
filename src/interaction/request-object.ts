// Request objects (RFC 9101, JAR) at the authorization endpoint and the pushed authorization
// request endpoint (RFC 9126 §3): a JWT signed with one of the client's keys that carries the
// authorization request's parameters as claims, verified with the client's public keys (its
// `jwks` or `jwks_uri`, src/client-auth/client-keys.ts). Every check is made here, once: an asymmetric
// signature (client secrets are stored hashed, so HMAC could never be verified, and `none` is
// never accepted, §6.1), iss the client, aud our issuer (§4), exp and nbf with a small clock
// skew and a lifetime of at most an hour, jti used once (src/stores/used-jtis.ts). A failure is
// invalid_request_object (§6.2) with a fixed description that never repeats the object.
// The CIBA endpoint's signed authentication requests are checked in src/flows/ciba/request-object.ts.
import { errors, jwtVerify, type JWSHeaderParameters } from 'jose'
import { ClientKeysUnavailable, type ClientKeyResolver } from '../client-auth/client-keys.js'
import type { Clock } from '../domain/clock.js'
import { signingAlgsFor } from '../domain/client-profile.js'
import type { Client } from '../domain/types.js'
import { OAuthError } from '../errors.js'
import { hasControlCharacters } from '../domain/input-limits.js'
import type { UsedJtiStore } from '../stores/used-jtis.js'
import type { RawParams } from './authorization-request.js'

/** Asymmetric algorithms only (FAPI 2.0 §5.4 narrows it to PS256 and ES256 for its clients). */
export const REQUEST_OBJECT_SIGNING_ALGS = ['PS256', 'ES256', 'RS256'] as const

/** The request object's own claims (RFC 7519 §4.1), which are not authorization parameters. */
const JWT_CLAIMS = new Set(['iss', 'aud', 'exp', 'nbf', 'iat', 'jti', 'sub'])
/** FAPI 2.0 Message Signing §5.3.1: exp no more than 60 minutes after nbf. */
const MAX_LIFETIME_SECONDS = 3600
const CLOCK_TOLERANCE_SECONDS = 30

export interface RequestObjectVerifierDeps {
  clock: Clock
  issuer: string
  usedJtis: Pick<UsedJtiStore, 'use'>
  /** The client's public keys, from `jwks` or `jwks_uri` (the resolver client assertions use). */
  keys: ClientKeyResolver
}

export interface RequestObjectVerifier {
  /** The authorization parameters the request object carries (client_id among them), or invalid_request_object. */
  verify(client: Client, jwt: string): Promise<RawParams>
}

const refuse = (description: string, cause?: unknown) => new OAuthError('invalid_request_object', description, { cause })

export function createRequestObjectVerifier(deps: RequestObjectVerifierDeps): RequestObjectVerifier {
  return {
    async verify(client, jwt) {
      if (!deps.keys.hasKeys(client)) throw refuse('request object: the client has no registered public keys')
      const keys = (header: JWSHeaderParameters) => deps.keys.resolve(client, header)
      let payload
      try {
        ;({ payload } = await jwtVerify(jwt, keys, {
          algorithms: signingAlgsFor(client, REQUEST_OBJECT_SIGNING_ALGS),
          issuer: client.clientId,
          audience: deps.issuer,
          requiredClaims: ['iss', 'aud', 'exp', 'nbf', 'jti'],
          currentDate: new Date(deps.clock.now()),
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
        }))
      } catch (err) {
        throw refuse(`request object: ${reason(err)}`, err)
      }
      if (payload.exp! - payload.nbf! > MAX_LIFETIME_SECONDS)
        throw refuse(`request object: exp is more than ${MAX_LIFETIME_SECONDS} seconds after nbf`)
      if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 200 || hasControlCharacters(payload.jti)) {
        throw refuse('request object: jti must be a short non-empty string')
      }
      // RFC 9101 §5: the client_id inside, when there, is the one outside.
      if (payload.client_id !== undefined && payload.client_id !== client.clientId) throw refuse('request object: client_id does not match')
      if ('request' in payload || 'request_uri' in payload) throw refuse('request object: it must not hold request or request_uri')
      const params: RawParams = [['client_id', client.clientId]]
      for (const [name, value] of Object.entries(payload)) {
        if (JWT_CLAIMS.has(name) || name === 'client_id') continue
        // A parameter is a string; a number (max_age) is taken as the string the query would carry.
        // Anything else (the claims parameter's object) is a parameter we do not support: ignored.
        if (typeof value === 'string') params.push([name, value])
        else if (typeof value === 'number' && Number.isFinite(value)) params.push([name, String(value)])
      }
      // Last: a request object refused for any other reason can be corrected and sent again.
      const fresh = await deps.usedJtis.use(client.clientId, payload.jti, (payload.exp! + CLOCK_TOLERANCE_SECONDS) * 1000, deps.clock.now())
      if (!fresh) throw refuse('request object: jti already used')
      return params
    },
  }
}

/** A fixed, printable reason (never the object or the library's message with its contents). */
function reason(err: unknown): string {
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'signature verification failed'
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) return 'no registered key matches'
  if (err instanceof ClientKeysUnavailable) return 'the client keys could not be fetched'
  if (err instanceof errors.JOSEAlgNotAllowed) return `algorithm not allowed (use ${REQUEST_OBJECT_SIGNING_ALGS.join(', ')})`
  if (err instanceof errors.JWTExpired) return 'expired'
  if (err instanceof errors.JWTClaimValidationFailed) {
    return /^[a-z_]{1,20}$/.test(err.claim) ? `${err.claim} claim ${err.reason === 'missing' ? 'missing' : 'invalid'}` : 'claim invalid'
  }
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid || err instanceof errors.JOSENotSupported)
    return 'malformed or unsigned'
  return 'not verifiable'
}
