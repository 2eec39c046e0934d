// RFC 8693 OAuth 2.0 Token Exchange, a built-in extension grant (RFC 6749 §4.5): a client that
// lists the grant type trades an access token of ours (the subject token) for another access
// token for the same subject, never with more scope (§2.1 scope; wider → invalid_scope) nor a
// longer life. With an actor token the new token says who acts for the subject (§4.1 `act`).
// A subject or actor token that is not an active access token of ours is invalid_request (§2.2.2);
// one whose client or user has been disabled or deleted is not active (src/tokens/token-reader.ts).
// §2.1 leaves to the server whether the client may act for the subject: a client exchanges only
// the tokens of the clients it lists (allowedSubjectTokenClients, none by default), and the rest
// is invalid_request as a token refused by policy (§2.2.2). Nor may it retarget a token to any API
// that shares a scope: the new token's audiences must all be in allowedExchangeAudiences (none by
// default), else invalid_target (§2.2.2: unwilling to issue a token for that target).
// The new token is issued from the subject token's grant: into its family (src/grants/one-time-use.ts),
// so that whatever revokes that grant revokes the exchanged token too.
import { z } from 'zod'
import { OAuthError } from '../../../errors.js'
import type { IssueParams, TokenResponse } from '../../../tokens/issuer.js'
import type { ReadAccessToken, TokenReader } from '../../../tokens/token-reader.js'
import { OFFLINE_ACCESS } from '../../../grants/scopes.js'
import type { GrantDeps, GrantHandler } from '../../../grants/registry.js'

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange'
/** RFC 8693 §3: the only token type we accept and issue. */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token'

const Params = z.object({
  subject_token: z.string().min(1),
  subject_token_type: z.string().min(1),
  actor_token: z.string().optional(),
  actor_token_type: z.string().optional(),
  requested_token_type: z.string().optional(),
  scope: z.string().optional(),
  audience: z.string().optional(),
  resource: z.string().optional(),
})
export type TokenExchangeParams = z.infer<typeof Params>

type Claims = Record<string, unknown>

/** Claims about the subject's sign-in that stay true of the new token. */
const CARRIED_CLAIMS = ['auth_time', 'amr', 'acr', 'idp', 'tenant']

function checkTypes(p: TokenExchangeParams): void {
  if (p.subject_token_type !== ACCESS_TOKEN_TYPE) throw new OAuthError('invalid_request', 'subject_token_type is not supported')
  if (p.actor_token !== undefined && p.actor_token_type === undefined)
    throw new OAuthError('invalid_request', 'actor_token_type is required with actor_token')
  if (p.actor_token === undefined && p.actor_token_type !== undefined)
    throw new OAuthError('invalid_request', 'actor_token_type is sent without actor_token')
  if (p.actor_token_type !== undefined && p.actor_token_type !== ACCESS_TOKEN_TYPE)
    throw new OAuthError('invalid_request', 'actor_token_type is not supported')
  if (p.requested_token_type !== undefined && p.requested_token_type !== ACCESS_TOKEN_TYPE) {
    throw new OAuthError('invalid_request', 'requested_token_type is not supported')
  }
}

const SUBJECT_INACTIVE = 'subject_token is not an active access token of this server'

/** An active access token of ours, or invalid_request naming the parameter. */
async function readAccessToken(reader: TokenReader, token: string, param: 'subject_token' | 'actor_token'): Promise<ReadAccessToken> {
  const read = await reader.read(token)
  if (read?.kind !== 'access_token' || typeof read.claims.sub !== 'string') {
    throw new OAuthError('invalid_request', `${param} is not an active access token of this server`)
  }
  return read
}

/**
 * Issues into the subject token's grant family, so that revoking that grant (RFC 7009 of its
 * refresh token, a replayed refresh token or code, RFC 9700 §4.14.2) revokes this token too, and
 * no token is issued into a family revoked meanwhile. A subject token of no family (a client's
 * own) gives a token of none, which lives no longer than the subject token.
 */
async function issueFromSubject(deps: GrantDeps, subject: ReadAccessToken, params: Omit<IssueParams, 'familyId'>): Promise<TokenResponse> {
  const family = await deps.tokenReader.familyOf(subject)
  if (!family) throw new OAuthError('invalid_request', SUBJECT_INACTIVE)
  try {
    return await deps.tokenIssuer.issue({ ...params, familyId: family.familyId })
  } catch (err) {
    // The family was revoked after the subject token was read: nothing was stored or returned.
    if (err instanceof OAuthError && err.code === 'invalid_grant') throw new OAuthError('invalid_request', SUBJECT_INACTIVE, { cause: err })
    throw err
  }
}

const isObject = (v: unknown): v is Claims => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * §4.1: the current actor on top, prior actors nested: the actor token's own `act` when it has
 * one, else the subject token's (the chain so far). Without an actor token a delegated subject
 * token stays delegated: its `act` is kept.
 */
function actClaim(subject: Claims, actor: Claims | undefined): Claims | undefined {
  if (!actor) return isObject(subject.act) ? subject.act : undefined
  const prior = isObject(actor.act) ? actor.act : isObject(subject.act) ? subject.act : undefined
  return prior ? { sub: actor.sub, act: prior } : { sub: actor.sub }
}

/** §2.1 scope: the requested scopes, each one the subject token has; omitted: all it has that the client may have. */
function requestedScopes(subject: Claims, scope: string | undefined, allowed: string[]): string {
  const held = typeof subject.scope === 'string' ? subject.scope.split(' ').filter((s) => s !== '') : []
  // No refresh token comes out of an exchange, so offline_access is never passed on.
  const usable = held.filter((s) => s !== OFFLINE_ACCESS)
  if (scope === undefined) {
    const mine = usable.filter((s) => allowed.includes(s))
    if (mine.length === 0) throw new OAuthError('invalid_scope', 'the client may have none of the scopes of the subject_token')
    return mine.join(' ')
  }
  const asked = scope.split(' ').filter((s) => s !== '' && s !== OFFLINE_ACCESS)
  if (!asked.every((s) => held.includes(s))) throw new OAuthError('invalid_scope', 'scope exceeds the scope of the subject_token')
  return asked.join(' ')
}

export function createTokenExchangeGrant(deps: GrantDeps): GrantHandler<TokenExchangeParams> {
  return {
    grantType: TOKEN_EXCHANGE_GRANT,
    params: Params,
    allowPublicClients: false,
    async handle(client, p, ctx) {
      checkTypes(p)
      // RFC 8693 names the target by `audience` (a logical name) or `resource` (RFC 8707); our
      // API resources are known by name, so both mean one API resource here.
      if (p.audience !== undefined && p.resource !== undefined && p.audience !== p.resource) {
        throw new OAuthError('invalid_target', 'audience and resource name different targets')
      }
      const subjectToken = await readAccessToken(deps.tokenReader, p.subject_token, 'subject_token')
      const subject = subjectToken.claims
      // Never "any access token of ours": without this, a gateway could present another client's
      // client_credentials token and act as that service.
      if (typeof subject.client_id !== 'string' || !client.allowedSubjectTokenClients.includes(subject.client_id)) {
        throw new OAuthError('invalid_request', 'subject_token was issued to a client whose tokens this client may not exchange')
      }
      const actor = p.actor_token === undefined ? undefined : (await readAccessToken(deps.tokenReader, p.actor_token, 'actor_token')).claims
      const granted = await deps.scopes.resolve(client, requestedScopes(subject, p.scope, client.allowedScopes), {
        allowIdentity: true,
        resource: p.resource ?? p.audience,
      })
      // Named (audience, resource) or implied by the scopes: every API the token would be good at.
      // A token with OpenID scopes alone has no API audience: it is for our userinfo endpoint.
      if (granted.audiences.some((a) => !client.allowedExchangeAudiences.includes(a))) {
        throw new OAuthError('invalid_target', 'the token would be for an audience this client may not obtain tokens for')
      }
      const claims: Claims = {}
      for (const c of CARRIED_CLAIMS) if (subject[c] !== undefined) claims[c] = subject[c]
      const act = actClaim(subject, actor)
      if (act) claims.act = act
      // Never outlives the subject token: an exchange cannot extend a token's life.
      const remaining = (subject.exp as number) - Math.floor(deps.clock.now() / 1000)
      if (remaining <= 0) throw new OAuthError('invalid_request', SUBJECT_INACTIVE)
      const res = await issueFromSubject(deps, subjectToken, {
        client,
        subjectId: subject.sub as string,
        granted,
        claims,
        maxLifetime: remaining,
        dpopJkt: ctx.dpop?.jkt,
      })
      return Object.assign(res, { issued_token_type: ACCESS_TOKEN_TYPE }) // keeps the issuer's ISSUED summary
    },
  }
}
