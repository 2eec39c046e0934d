// RFC 7662 token introspection and RFC 9701 JWT responses. What a token is comes from the token
// reader (src/tokens/token-reader.ts: JWTs verified once and cached, handles looked up by hash);
// this service decides what the caller may see of it.
// An API resource sees an access token only when the token's audience names it.
import type { Config } from '../../config.js'
import type { Clock } from '../../domain/clock.js'
import type { PersistedGrant } from '../../domain/types.js'
import type { IntrospectionCaller } from '../../domain/types.js'
import type { ClientStore } from '../../stores/clients.js'
import type { GrantStore } from '../../stores/grants.js'
import type { UserStore } from '../../stores/users.js'
import type { SigningKeyService } from '../../keys/signing-keys.js'
import { createTokenReader, type TokenReader } from '../../tokens/token-reader.js'
import type { RevocationList } from '../../tokens/revocation-list.js'
import type { RefreshTokenData } from '../../tokens/issuer.js'

export type IntrospectionResponse = { active: false } | ({ active: true } & Record<string, unknown>)

export interface IntrospectionService {
  introspect(caller: IntrospectionCaller, token: string, hint?: string): Promise<IntrospectionResponse>
  /** RFC 9701 §5: the answer as a signed `token-introspection+jwt`. */
  sign(caller: IntrospectionCaller, answer: IntrospectionResponse): Promise<string>
}

const INACTIVE: { active: false } = Object.freeze({ active: false })

function hasAudience(aud: unknown, name: string): boolean {
  return aud === name || (Array.isArray(aud) && aud.includes(name))
}

export function createIntrospectionService(deps: {
  config: Pick<Config, 'issuer' | 'accessTokenSigningAlg'>
  clock: Clock
  keys: SigningKeyService
  grants: GrantStore
  revocations: Pick<RevocationList, 'has'>
  /** Cached: a token of a disabled or deleted client or user is inactive (token-reader.ts). */
  clients: Pick<ClientStore, 'findById'>
  users: Pick<UserStore, 'isEnabled'>
  cacheSize?: number
  /** Shared with token exchange so both use one verified-JWT cache; built from the above when omitted. */
  reader?: TokenReader
}): IntrospectionService {
  const { config, clock } = deps
  const reader = deps.reader ?? createTokenReader(deps)

  /** The caller's view of an active access token's claims (RFC 7662 §2.2). */
  function accessTokenAnswer(caller: IntrospectionCaller, claims: Record<string, unknown>): IntrospectionResponse {
    let scope = typeof claims.scope === 'string' ? claims.scope : ''
    if (caller.kind === 'api') {
      // An API sees a token only if the token is meant for it (its audience, RFC 8707 §2,
      // RFC 9068 §4) and carries one of its scopes; and of the scopes, only its own.
      if (!hasAudience(claims.aud, caller.name)) return INACTIVE
      const own = scope.split(' ').filter((s) => caller.scopes.includes(s))
      if (own.length === 0) return INACTIVE
      scope = own.join(' ')
    } else if (claims.client_id !== caller.clientId) {
      return INACTIVE
    }
    // RFC 7662 §2.2 token_type; a DPoP-bound token's cnf (RFC 9449 §6.2) lets the API check the proof's key.
    const bound = typeof claims.cnf === 'object' && claims.cnf !== null
    return { active: true, ...claims, scope, token_type: bound ? 'DPoP' : 'Bearer' }
  }

  /** Refresh tokens: visible only to the client that owns them, never to an API. */
  function refreshTokenAnswer(caller: IntrospectionCaller, g: PersistedGrant): IntrospectionResponse {
    if (caller.kind !== 'client' || g.clientId !== caller.clientId || g.consumedAt !== undefined) return INACTIVE
    const data = g.data as unknown as RefreshTokenData
    const out: Record<string, unknown> = {
      active: true,
      iss: config.issuer,
      sub: g.subjectId,
      client_id: g.clientId,
      scope: data.granted.scopes.join(' '),
      iat: Math.floor(g.createdAt / 1000),
    }
    if (g.expiresAt !== undefined) out.exp = Math.floor(g.expiresAt / 1000)
    if (data.jkt !== undefined) out.cnf = { jkt: data.jkt }
    return out as IntrospectionResponse
  }

  return {
    async introspect(caller, token) {
      const read = await reader.read(token)
      if (!read) return INACTIVE
      return read.kind === 'access_token' ? accessTokenAnswer(caller, read.claims) : refreshTokenAnswer(caller, read.grant)
    },
    sign(caller, answer) {
      const ti: Record<string, unknown> = { ...answer }
      if (typeof ti.aud === 'string') ti.aud = [ti.aud]
      // RFC 9701 §5: iss, aud (the caller), iat, token_introspection; no top-level sub or exp.
      return deps.keys.sign(
        {
          iss: config.issuer,
          aud: caller.kind === 'api' ? caller.name : caller.clientId,
          iat: Math.floor(clock.now() / 1000),
          token_introspection: ti,
        },
        { alg: config.accessTokenSigningAlg, typ: 'token-introspection+jwt' },
      )
    },
  }
}
