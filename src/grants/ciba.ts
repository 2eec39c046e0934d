// OpenID CIBA Core 1.0 §10.1 (token request), §11 (errors): the poll-mode token grant.
// Check order matters: unknown/other client → invalid_grant; already redeemed → slow_down when too
// soon, else revoke + invalid_grant; expired → expired_token (never slow_down after expiry);
// too soon → slow_down (the stored interval grows by 5 s);
// denied → access_denied; pending → authorization_pending; approved → consume once, issue.
import { z } from 'zod'
import type { Clock } from '../domain/clock.js'
import type { CibaRequest, Client } from '../domain/types.js'
import { OAuthError } from '../errors.js'
import type { ScopeResolver } from './scopes.js'
import type { TokenIssuer, TokenResponse } from '../tokens/issuer.js'
import type { CibaRequestStore, GrantStore, UserStore } from '../stores/types.js'
import type { GrantHandler } from './registry.js'

/** OpenID CIBA Core 1.0 §10.1: the grant type of the token request. */
export const CIBA_GRANT = 'urn:openid:params:grant-type:ciba'

/** The acr values a password sign-in on the approval page satisfies (emitted as `acr`). */
export const SATISFIED_ACR_VALUES: readonly string[] = ['1', 'pwd']

export interface CibaGrantDeps {
  clock: Clock
  requests: CibaRequestStore
  grants: Pick<GrantStore, 'revokeFamily'>
  users: Pick<UserStore, 'findBySubjectId'>
  scopes: ScopeResolver
  tokens: TokenIssuer
}

export function createCibaGrant(deps: CibaGrantDeps): GrantHandler<{ auth_req_id: string }> {
  const { clock, requests } = deps

  async function issue(client: Client, req: CibaRequest): Promise<TokenResponse> {
    const user = await deps.users.findBySubjectId(req.subjectId)
    if (!user || !user.enabled) throw new OAuthError('invalid_grant', 'the user is no longer active')
    // Re-resolved at issuance: a scope the client lost since the request is not issued.
    const granted = await deps.scopes.resolve(client, (req.approvedScopes ?? []).join(' '), {
      allowIdentity: true,
      resource: req.resources[0],
    })
    const authTime = Math.floor((req.authTime ?? req.decidedAt ?? clock.now()) / 1000)
    const acr = req.acrValues.find((v) => SATISFIED_ACR_VALUES.includes(v))
    const amr = ['pwd']
    const extra: Record<string, unknown> = {}
    if (req.tenant !== undefined) extra.tenant = req.tenant
    if (req.idp !== undefined) extra.idp = req.idp
    return deps.tokens.issue({
      client,
      subjectId: req.subjectId,
      granted,
      familyId: req.familyId,
      claims: { ...extra, auth_time: authTime, amr, ...(acr ? { acr } : {}) },
      idToken: { user, authTime, amr, ...(acr ? { acr } : {}), extraClaims: extra },
      refreshToken: true,
    })
  }

  return {
    grantType: CIBA_GRANT,
    params: z.object({ auth_req_id: z.string().min(1).max(256) }),
    async handle(client, { auth_req_id }) {
      const req = await requests.findByAuthReqId(auth_req_id)
      if (!req || req.clientId !== client.clientId) throw new OAuthError('invalid_grant', 'unknown auth_req_id')
      const now = clock.now()
      // Already redeemed: a poll overlapping the redeeming one (CIBA §10.1 forbids them, but they
      // happen) is just too fast; a later one is a replay and revokes what was issued.
      if (req.consumedAt !== undefined) {
        await throttle(req.id, now)
        return replay(req, now)
      }
      if (req.expiresAt <= now) throw new OAuthError('expired_token', 'the request has expired')
      await throttle(req.id, now)
      if (req.status === 'denied') throw new OAuthError('access_denied', 'the user denied the request')
      if (req.status === 'pending') throw new OAuthError('authorization_pending')
      const consumed = await requests.consume(req.id, now)
      if (!consumed) return replay(req, now)
      return issue(client, consumed)
    },
  }

  async function throttle(id: string, now: number): Promise<void> {
    const poll = await requests.recordPoll(id, now)
    if (!poll) throw new OAuthError('invalid_grant', 'unknown auth_req_id')
    if (!poll.accepted) throw new OAuthError('slow_down', `poll at most every ${poll.intervalSeconds} seconds`)
  }

  async function replay(req: CibaRequest, now: number): Promise<never> {
    // §7.3: the auth_req_id is single use; a second redemption revokes what the first issued
    // (RFC 9700 §4.14.2, as node-oidc-provider does).
    await deps.grants.revokeFamily(req.familyId, now)
    throw new OAuthError('invalid_grant', 'auth_req_id already used')
  }
}
