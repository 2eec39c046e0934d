// RFC 7662 token introspection and RFC 9701 JWT responses. JWT access tokens are verified once
// and cached by their exact string (bounded), then checked against the clock and the in-memory
// revocation list on every call: no database read. Reference and refresh tokens: one indexed
// lookup by handle hash (a handle hash is unique across kinds, so token_type_hint cannot hide one).
import type { Config } from '../config.js'
import type { Clock } from '../domain/clock.js'
import type { PersistedGrant } from '../domain/types.js'
import type { IntrospectionCaller } from '../domain/types.js'
import type { GrantStore } from '../stores/types.js'
import type { SigningKeyService } from '../tokens/signing-keys.js'
import type { RevocationList } from './revocation-list.js'
import type { RefreshTokenData } from '../tokens/issuer.js'

export type IntrospectionResponse = { active: false } | ({ active: true } & Record<string, unknown>)

export interface IntrospectionService {
  introspect(caller: IntrospectionCaller, token: string, hint?: string): Promise<IntrospectionResponse>
  /** RFC 9701 §5: the answer as a signed `token-introspection+jwt`. */
  sign(caller: IntrospectionCaller, answer: IntrospectionResponse): Promise<string>
}

export const JWT_CACHE_SIZE = 10_000
const INACTIVE: { active: false } = Object.freeze({ active: false }) as { active: false }

/** Cheap shape test: compact JWS has exactly two dots; our handles have none. */
export function looksLikeJwt(token: string): boolean {
  const a = token.indexOf('.')
  const b = a < 0 ? -1 : token.indexOf('.', a + 1)
  return b > 0 && token.indexOf('.', b + 1) === -1
}

export function createIntrospectionService(deps: {
  config: Pick<Config, 'issuer' | 'accessTokenSigningAlg'>
  clock: Clock
  keys: SigningKeyService
  grants: GrantStore
  revocations: Pick<RevocationList, 'has'>
  cacheSize?: number
}): IntrospectionService {
  const { config, clock } = deps
  // Two generations of at most half the size each, instead of deleting the oldest key of one Map:
  // V8 leaves deleted entries as holes that keys().next() walks past, measured at ~10 µs per
  // eviction with 10,000 entries, i.e. on every request once tokens outnumber the cache.
  const generationSize = Math.max(1, Math.floor((deps.cacheSize ?? JWT_CACHE_SIZE) / 2))
  let young = new Map<string, Record<string, unknown>>()
  let old = new Map<string, Record<string, unknown>>()
  const remember = (token: string, payload: Record<string, unknown>) => {
    if (young.size >= generationSize) {
      old = young
      young = new Map()
    }
    young.set(token, payload)
  }

  /** Signature, typ at+jwt, iss; cached. Times are checked by the caller on every use. */
  async function verifyJwt(token: string): Promise<Record<string, unknown> | undefined> {
    const hit = young.get(token)
    if (hit) return hit
    const older = old.get(token)
    if (older) {
      remember(token, older) // still in use: keep it past the next generation change
      return older
    }
    let payload: Record<string, unknown>
    try {
      payload = (await deps.keys.verify(token, { typ: 'at+jwt' })).payload as Record<string, unknown>
    } catch {
      return undefined // malformed, unknown key, bad signature, wrong typ
    }
    if (payload.iss !== config.issuer || typeof payload.exp !== 'number' || typeof payload.jti !== 'string') return undefined
    remember(token, payload)
    return payload
  }

  /** The caller's view of an access token's claims, or inactive (RFC 7662 §2.2). */
  function accessTokenAnswer(caller: IntrospectionCaller, claims: Record<string, unknown>, nowSec: number): IntrospectionResponse {
    // Expired means expired: no clock-skew grace for our own tokens.
    if ((claims.exp as number) <= nowSec) return INACTIVE
    if (typeof claims.nbf === 'number' && claims.nbf > nowSec) return INACTIVE
    if (deps.revocations.has(claims.jti as string)) return INACTIVE
    let scope = typeof claims.scope === 'string' ? claims.scope : ''
    if (caller.kind === 'api') {
      // An API sees a token only if it carries one of its scopes, and only its own scopes.
      const own = scope.split(' ').filter((s) => caller.scopes.includes(s))
      if (own.length === 0) return INACTIVE
      scope = own.join(' ')
    } else if (claims.client_id !== caller.clientId) {
      return INACTIVE
    }
    return { active: true, ...claims, scope, token_type: 'Bearer' }
  }

  /** Refresh tokens: visible only to the client that owns them, never to an API. */
  function refreshTokenAnswer(caller: IntrospectionCaller, g: PersistedGrant): IntrospectionResponse {
    if (caller.kind !== 'client' || g.clientId !== caller.clientId || g.consumedAt !== undefined) return INACTIVE
    const data = g.data as unknown as RefreshTokenData
    const out: Record<string, unknown> = {
      active: true, iss: config.issuer, sub: g.subjectId, client_id: g.clientId,
      scope: data.granted.scopes.join(' '), iat: Math.floor(g.createdAt / 1000),
    }
    if (g.expiresAt !== undefined) out.exp = Math.floor(g.expiresAt / 1000)
    return out as IntrospectionResponse
  }

  async function lookupHandle(caller: IntrospectionCaller, token: string, now: number): Promise<IntrospectionResponse> {
    const g = await deps.grants.find(token)
    if (!g || (g.expiresAt !== undefined && g.expiresAt <= now)) return INACTIVE
    if (g.kind === 'reference_token') return accessTokenAnswer(caller, g.data, Math.floor(now / 1000))
    if (g.kind === 'refresh_token') return refreshTokenAnswer(caller, g)
    return INACTIVE
  }

  return {
    async introspect(caller, token) {
      const now = clock.now()
      if (looksLikeJwt(token)) {
        const claims = await verifyJwt(token)
        return claims ? accessTokenAnswer(caller, claims, Math.floor(now / 1000)) : INACTIVE
      }
      if (token.length > 100) return INACTIVE
      return lookupHandle(caller, token, now)
    },
    sign(caller, answer) {
      const ti: Record<string, unknown> = { ...answer }
      if (typeof ti.aud === 'string') ti.aud = [ti.aud]
      // RFC 9701 §5: iss, aud (the caller), iat, token_introspection; no top-level sub or exp.
      return deps.keys.sign(
        { iss: config.issuer, aud: caller.kind === 'api' ? caller.name : caller.clientId, iat: Math.floor(clock.now() / 1000), token_introspection: ti },
        { alg: config.accessTokenSigningAlg, typ: 'token-introspection+jwt' },
      )
    },
  }
}
