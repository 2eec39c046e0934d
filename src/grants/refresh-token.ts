// RFC 6749 §6 refresh token grant. Rotation per client refreshTokenUsage (oneTimeOnly by default);
// a consumed token presented again revokes its whole grant family (RFC 9700 §4.14.2, RFC 6749
// §10.4). Absolute expiry is anchored at the family's first token; sliding lifetimes are
// applied to each rotated token and capped by the absolute one.
import { z } from 'zod'
import type { Clock } from '../domain/clock.js'
import { OAuthError } from '../errors.js'
import type { ScopeResolver } from './scopes.js'
import type { RefreshTokenData, TokenIssuer, TokenResponse } from '../tokens/issuer.js'
import type { GrantStore, UserStore } from '../stores/types.js'
import type { GrantHandler } from './registry.js'

const Params = z.object({ refresh_token: z.string().min(1).max(100), scope: z.string().optional() })
export type RefreshTokenParams = z.infer<typeof Params>

export function createRefreshTokenGrant(deps: {
  clock: Clock
  grants: GrantStore
  users?: UserStore
  scopes: ScopeResolver
  tokens: TokenIssuer
}): GrantHandler<RefreshTokenParams> {
  const invalid = (d: string) => new OAuthError('invalid_grant', d)
  return {
    grantType: 'refresh_token',
    params: Params,
    allowPublicClients: true,
    async handle(client, { refresh_token, scope }): Promise<TokenResponse> {
      const now = deps.clock.now()
      const g = await deps.grants.find(refresh_token, 'refresh_token')
      if (!g || g.clientId !== client.clientId) throw invalid('unknown refresh token')
      if (g.consumedAt !== undefined) {
        await deps.grants.revokeFamily(g.familyId, now)
        throw invalid('refresh token already used')
      }
      if (g.expiresAt !== undefined && g.expiresAt <= now) throw invalid('refresh token expired')
      if (!client.allowOfflineAccess) throw invalid('the client may no longer use refresh tokens')
      const user = g.subjectId !== undefined && deps.users ? await deps.users.findBySubjectId(g.subjectId) : undefined
      if (g.subjectId !== undefined && deps.users && (!user || !user.enabled)) throw invalid('the user is no longer active')

      const data = g.data as unknown as RefreshTokenData
      // Revalidate against the client's current configuration; a narrower scope is allowed, a wider one is not.
      const granted = await deps.scopes.resolve(client, scope ?? data.granted.scopes.join(' '), { allowIdentity: true })
      if (!granted.scopes.every((s) => data.granted.scopes.includes(s))) throw new OAuthError('invalid_scope', 'scope exceeds the original grant')

      const rotate = client.refreshTokenUsage === 'oneTimeOnly'
      if (rotate && !(await deps.grants.consume(refresh_token, 'refresh_token', now))) {
        // Lost a race with a concurrent redemption of the same token: treat as replay.
        await deps.grants.revokeFamily(g.familyId, now)
        throw invalid('refresh token already used')
      }
      const idToken = user && data.idToken ? { user, authTime: data.idToken.authTime, acr: data.idToken.acr, amr: data.idToken.amr } : undefined
      const res = await deps.tokens.issue({
        client, subjectId: g.subjectId, granted: { ...granted, offlineAccess: rotate && granted.offlineAccess }, claims: data.claims,
        familyId: g.familyId, refreshToken: rotate, refreshAbsoluteExpiresAt: data.absoluteExpiresAt,
        ...(idToken ? { idToken: stripUndefined(idToken) } : {}),
      })
      return rotate ? res : { ...res, refresh_token: refresh_token }
    },
  }
}

function stripUndefined<T extends Record<string, unknown>>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k]
  return o
}
