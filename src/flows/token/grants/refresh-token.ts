// RFC 6749 §6 refresh token grant. Rotation per client refreshTokenUsage (oneTimeOnly by default;
// always for public clients, RFC 9700 §4.14.2, whose families also have a capped absolute lifetime);
// a consumed token presented again revokes its whole grant family (RFC 9700 §4.14.2, RFC 6749
// §10.4), through the one-time-use helper, so that concurrent refreshes and a racing RFC 7009
// revocation leave no token alive. Absolute expiry is anchored at the family's first token;
// sliding lifetimes are applied to each rotated token and capped by the absolute one.
// RFC 8707 §2.2: a refreshed access token never reaches beyond the audiences of the original
// grant; `resource` may narrow it to one of them. `scope` and `resource` narrow the access token
// only: the rotated refresh token carries the original grant (RFC 6749 §6), whether or not the
// narrowed scope names offline_access, so one narrowed refresh never loses the rest of the grant.
import { z } from 'zod'
import type { Clock } from '../../../domain/clock.js'
import { isPublicClient, refreshFamilyStart, rotatesRefreshTokens } from '../../../domain/public-client.js'
import type { Client, ResolvedScopes } from '../../../domain/types.js'
import { OAuthError } from '../../../errors.js'
import type { OneTimeUse } from '../../../grants/one-time-use.js'
import type { ScopeResolver } from '../../../grants/scopes.js'
import type { RefreshTokenData, TokenIssuer, TokenResponse } from '../../../tokens/issuer.js'
import type { GrantStore } from '../../../stores/grants.js'
import type { UserStore } from '../../../stores/users.js'
import type { AuditSink } from '../../../observe/audit.js'
import type { GrantHandler } from '../../../grants/registry.js'
import { checkBoundKey } from '../../../tokens/dpop.js'

const Params = z.object({ refresh_token: z.string().min(1).max(100), scope: z.string().optional(), resource: z.string().optional() })
export type RefreshTokenParams = z.infer<typeof Params>

const USED_AGAIN = 'refresh token already used'

export function createRefreshTokenGrant(deps: {
  clock: Clock
  /** Seconds: PUBLIC_CLIENT_REFRESH_TOKEN_LIFETIME, counted from the family's start. */
  publicClientRefreshTokenLifetime: number
  grants: Pick<GrantStore, 'find' | 'consume'>
  oneTimeUse: OneTimeUse
  users?: UserStore
  scopes: ScopeResolver
  tokenIssuer: TokenIssuer
  audit?: AuditSink
}): GrantHandler<RefreshTokenParams> {
  const invalid = (d: string) => new OAuthError('invalid_grant', d)

  /** The scopes and audiences of the new access token: within the original grant (RFC 6749 §6, RFC 8707 §2.2). */
  async function regrant(client: Client, original: ResolvedScopes, params: RefreshTokenParams): Promise<ResolvedScopes> {
    const { scope, resource } = params
    if (resource !== undefined && !original.audiences.includes(resource)) {
      throw new OAuthError('invalid_target', 'resource is not part of the original grant')
    }
    // Revalidated against the client's current configuration; a narrower scope is allowed, a wider one is not.
    const granted = await deps.scopes.resolve(client, scope ?? original.scopes.join(' '), { allowIdentity: true, resource })
    if (!granted.scopes.every((s) => original.scopes.includes(s))) throw new OAuthError('invalid_scope', 'scope exceeds the original grant')
    const audiences = granted.audiences.filter((a) => original.audiences.includes(a))
    if (audiences.length === 0 && original.audiences.length > 0 && granted.apiScopes.length > 0) {
      throw new OAuthError('invalid_target', 'no resource of the original grant accepts the requested scopes')
    }
    return { ...granted, audiences }
  }

  return {
    grantType: 'refresh_token',
    params: Params,
    allowPublicClients: true,
    async handle(client, params, ctx): Promise<TokenResponse> {
      const { refresh_token } = params
      const now = deps.clock.now()
      const g = await deps.grants.find(refresh_token, 'refresh_token')
      if (!g || g.clientId !== client.clientId) throw invalid('unknown refresh token')
      const data = g.data as unknown as RefreshTokenData
      // RFC 9449 §5: a bound token (a public client's) needs a proof of its key, before anything else happens.
      checkBoundKey(data.jkt, ctx.dpop, 'refresh token')
      const who = {
        clientId: client.clientId,
        subject: g.subjectId,
        grantType: 'refresh_token',
        address: ctx.address,
        requestId: ctx.requestId,
      }
      if (g.consumedAt !== undefined) return deps.oneTimeUse.replayed(g.familyId, USED_AGAIN, who)
      if (g.expiresAt !== undefined && g.expiresAt <= now) throw invalid('refresh token expired')
      if (!client.allowOfflineAccess) throw invalid('the client may no longer use refresh tokens')
      const user = g.subjectId !== undefined && deps.users ? await deps.users.findBySubjectId(g.subjectId) : undefined
      if (g.subjectId !== undefined && deps.users && (!user || !user.enabled)) throw invalid('the user is no longer active')

      // The public cap counts from the family's start, whatever expiry the token got under the
      // rules of its time (a confidential client's, a longer cap): RFC 9700 §4.14.2.
      const startedAt = refreshFamilyStart(data)
      if (isPublicClient(client) && startedAt !== undefined && startedAt + deps.publicClientRefreshTokenLifetime * 1000 <= now) {
        throw invalid('refresh token expired')
      }
      const granted = await regrant(client, data.granted, params)
      // A public client's tokens rotate even with reUse configured (RFC 9700 §4.14.2).
      const rotate = rotatesRefreshTokens(client)
      const idToken =
        user && data.idToken
          ? { user, authTime: data.idToken.authTime, acr: data.idToken.acr, amr: data.idToken.amr, extraClaims: data.idToken.extraClaims }
          : undefined
      const issue = () =>
        deps.tokenIssuer.issue({
          client,
          subjectId: g.subjectId,
          granted,
          refreshGranted: data.granted,
          claims: data.claims,
          familyId: g.familyId,
          refreshToken: rotate,
          dpopJkt: ctx.dpop?.jkt,
          refreshAbsoluteExpiresAt: data.absoluteExpiresAt,
          ...(startedAt !== undefined ? { refreshStartedAt: startedAt } : {}),
          ...(idToken ? { idToken: stripUndefined(idToken) } : {}),
        })
      // reUse: the token stays valid and is not consumed; what is issued still joins its family.
      if (!rotate) return Object.assign(await issue(), { refresh_token }) // keeps the issuer's ISSUED summary
      const res = await deps.oneTimeUse.redeem({
        familyId: g.familyId,
        consume: () => deps.grants.consume(refresh_token, 'refresh_token', now),
        issue,
        usedAgain: USED_AGAIN,
        who,
      })
      deps.audit?.emit({
        event: 'token.refreshed',
        ...who,
        accessTokenFormat: client.accessTokenType === 'reference' ? 'reference' : 'jwt',
      })
      return res
    },
  }
}

function stripUndefined<T extends Record<string, unknown>>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k]
  return o
}
