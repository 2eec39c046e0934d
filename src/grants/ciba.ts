// OpenID CIBA Core 1.0 §10.1 (token request), §11 (errors): the poll-mode token grant.
// Check order matters: unknown/other client → invalid_grant; already redeemed → slow_down for a
// duplicate poll in flight at the moment of redemption (within REDEMPTION_GRACE_MS of it), else
// revoke + invalid_grant whatever the polling interval; expired → expired_token (never slow_down
// after expiry); too soon → slow_down (the stored interval grows by 5 s);
// denied → access_denied; pending → authorization_pending; approved → consume once, issue.
// Single use and the revocation of a second use are the one-time-use helper's (one-time-use.ts).
import { z } from 'zod'
import type { Clock } from '../domain/clock.js'
import type { CibaRequest, Client } from '../domain/types.js'
import { OAuthError } from '../errors.js'
import type { ScopeResolver } from './scopes.js'
import type { TokenIssuer, TokenResponse } from '../tokens/issuer.js'
import type { CibaRequestStore, UserStore } from '../stores/types.js'
import type { OneTimeUse } from './one-time-use.js'
import type { GrantHandler } from './registry.js'

/** OpenID CIBA Core 1.0 §10.1: the grant type of the token request. */
export const CIBA_GRANT = 'urn:openid:params:grant-type:ciba'

/**
 * How long after its redemption an auth_req_id answers slow_down rather than revoking: only a poll
 * already in flight when the tokens were issued (CIBA §10.1 forbids it, but it happens) gets it.
 * Never longer than the request's polling interval, so a poll the throttle accepts is past it.
 */
export const REDEMPTION_GRACE_MS = 2000

const USED_AGAIN = 'auth_req_id already used'

/** The acr values a password sign-in on the approval page satisfies (emitted as `acr`). */
export const SATISFIED_ACR_VALUES: readonly string[] = ['1', 'pwd']

export interface CibaGrantDeps {
  clock: Clock
  requests: CibaRequestStore
  once: OneTimeUse
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
      const now = clock.now()
      const req = await requests.findByAuthReqId(auth_req_id)
      if (!req || req.clientId !== client.clientId) throw new OAuthError('invalid_grant', 'unknown auth_req_id')
      if (req.consumedAt !== undefined) {
        // A poll that was in flight when the request was redeemed is too fast, not a replay.
        if (now < req.consumedAt + Math.min(REDEMPTION_GRACE_MS, req.intervalSeconds * 1000)) throw slowDown(req.intervalSeconds)
        return deps.once.replayed(req.familyId, USED_AGAIN)
      }
      if (req.expiresAt <= now) throw new OAuthError('expired_token', 'the request has expired')
      await throttle(req.id, now)
      if (req.status === 'denied') throw new OAuthError('access_denied', 'the user denied the request')
      if (req.status === 'pending') throw new OAuthError('authorization_pending')
      return deps.once.redeem({
        familyId: req.familyId,
        consume: () => requests.consume(req.id, now),
        issue: (consumed) => issue(client, consumed),
        usedAgain: USED_AGAIN,
      })
    },
  }

  async function throttle(id: string, now: number): Promise<void> {
    const poll = await requests.recordPoll(id, now)
    if (!poll) throw new OAuthError('invalid_grant', 'unknown auth_req_id')
    if (!poll.accepted) throw slowDown(poll.intervalSeconds)
  }
}

function slowDown(intervalSeconds: number): OAuthError {
  return new OAuthError('slow_down', `poll at most every ${intervalSeconds} seconds`)
}
