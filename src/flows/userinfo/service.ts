// The UserInfo endpoint's logic (OpenID Connect Core §5.3): the claims of the user an access token
// was issued for, as far as the token's identity scopes release them (§5.4), `sub` always. Errors
// as RFC 6750 §3 says: a missing, expired, revoked, forged or foreign token is 401 invalid_token;
// a token without `openid` is 403 insufficient_scope. JWT and reference access tokens alike
// (the token reader checks signature or stored row, expiry, revocation, and that the token's client
// and user are still enabled; the user is then read afresh for the claims, and checked again).
import type { Config } from '../../config.js'
import { OAuthError } from '../../errors.js'
import type { ResourceStore } from '../../stores/resources.js'
import type { UserStore } from '../../stores/users.js'
import type { TokenReader } from '../../tokens/token-reader.js'

export interface UserinfoDeps {
  config: Pick<Config, 'issuer'>
  reader: TokenReader
  users: Pick<UserStore, 'findBySubjectId'>
  resources: Pick<ResourceStore, 'loadCatalogue'>
}

/** RFC 6750 §3: the challenge, with an error code when there is one. */
export function bearerChallenge(realm: string, error?: 'invalid_request' | 'invalid_token' | 'insufficient_scope', extra = ''): string {
  const r = `Bearer realm="${realm.replace(/["\\]/g, '')}"`
  return error ? `${r}, error="${error}"${extra}` : r
}

export interface UserinfoService {
  /** The client the token was issued to (CORS: whose allowedCorsOrigins apply), if it is a live token of ours. */
  clientOf(token: string | undefined): Promise<string | undefined>
  /** `token` as presented (undefined: none was). */
  claims(token: string | undefined): Promise<Record<string, unknown>>
}

export function createUserinfoService(deps: UserinfoDeps): UserinfoService {
  const realm = deps.config.issuer
  const invalidToken = () =>
    new OAuthError('invalid_token', 'the access token is not valid', {
      headers: { 'www-authenticate': bearerChallenge(realm, 'invalid_token') },
    })

  return {
    /** The client the token was issued to (CORS: whose allowedCorsOrigins apply), if it is a live token of ours. */
    async clientOf(token: string | undefined): Promise<string | undefined> {
      const read = token === undefined ? undefined : await deps.reader.read(token)
      return read?.kind === 'access_token' && typeof read.claims.client_id === 'string' ? read.claims.client_id : undefined
    },

    /** `token` as presented (undefined: none was). */
    async claims(token: string | undefined): Promise<Record<string, unknown>> {
      // §3.1: a request without any authentication information gets the challenge without an error code.
      if (token === undefined) {
        throw new OAuthError('invalid_token', 'an access token is required', { headers: { 'www-authenticate': bearerChallenge(realm) } })
      }
      const read = await deps.reader.read(token)
      if (!read || read.kind !== 'access_token' || typeof read.claims.sub !== 'string') throw invalidToken()
      const scopes = typeof read.claims.scope === 'string' ? read.claims.scope.split(' ') : []
      if (!scopes.includes('openid')) {
        throw new OAuthError('insufficient_scope', 'the access token lacks the openid scope', {
          headers: { 'www-authenticate': bearerChallenge(realm, 'insufficient_scope', ', scope="openid"') },
        })
      }
      const user = await deps.users.findBySubjectId(read.claims.sub)
      if (!user || !user.enabled) throw invalidToken()
      const catalogue = await deps.resources.loadCatalogue()
      // §5.3.2: sub always, and always the token's subject (no stored claim may replace it).
      const out: Record<string, unknown> = { sub: user.subjectId }
      for (const scope of scopes) {
        const resource = catalogue.identityResources.get(scope)
        if (!resource?.enabled) continue
        for (const c of resource.claims) if (c !== 'sub' && user.claims[c] !== undefined) out[c] = user.claims[c]
      }
      return out
    },
  }
}
