// The token endpoint's side of every grant a client polls for: OpenID CIBA Core 1.0 §11 (the
// auth_req_id) and RFC 8628 §3.5 (the device_code) share these rules, in this order:
//  1. unknown, or another client's → invalid_grant;
//  2. already redeemed → slow_down for a duplicate poll in flight at the moment of redemption
//     (within REDEMPTION_GRACE_MS of it), else revoke what it issued + invalid_grant, whatever
//     the polling interval (one-time-use.ts);
//  3. expired → expired_token (never slow_down after expiry);
//  4. too soon after the last accepted poll → slow_down, and the interval stored in the database
//     grows by 5 s, so every replica agrees (PolledGrantStore.recordPoll);
//  5. denied → access_denied; pending → authorization_pending;
//  6. approved → consumed once and issued from (one-time-use.ts).
import type { Clock } from '../domain/clock.js'
import type { CibaStatus, Client } from '../domain/types.js'
import { OAuthError } from '../errors.js'
import type { PolledGrantStore } from '../stores/polling.js'
import type { TokenResponse } from '../tokens/issuer.js'
import type { OneTimeUse, Who } from './one-time-use.js'
import type { GrantContext } from './registry.js'

/**
 * How long after its redemption a polled grant answers slow_down rather than revoking: only a
 * poll already in flight when the tokens were issued (CIBA §10.1 and RFC 8628 §3.4 forbid
 * overlapping polls, but they happen) gets it. Never longer than the polling interval, so a poll
 * the throttle accepts is past it.
 */
export const REDEMPTION_GRACE_MS = 2000

/** What the polling rules read of a CIBA request or a device authorization. */
export interface PolledGrant {
  id: string
  clientId: string
  status: CibaStatus
  intervalSeconds: number
  familyId: string
  expiresAt: number
  consumedAt: number | undefined
  /** The user it was approved for (audit events). */
  subjectId?: string | undefined
}

/** The fixed error_description sentences of one grant (RFC 6749 §5.2: ASCII, no input echoed). */
export interface PollingTexts {
  unknown: string
  usedAgain: string
  expired: string
  denied: string
}

export interface Poll<R extends PolledGrant> {
  client: Client
  /** The grant the presented handle names, if any. */
  found: R | undefined
  store: PolledGrantStore<R>
  texts: PollingTexts
  /** Issues the response into the grant's family (TokenIssuer.issue with its familyId). */
  issue(consumed: R): Promise<TokenResponse>
  /** The grant type and the request, for the audit event of a second use. */
  grantType?: string
  ctx?: GrantContext
}

export interface Polling {
  poll<R extends PolledGrant>(p: Poll<R>): Promise<TokenResponse>
}

export function createPolling(deps: { clock: Clock; oneTimeUse: OneTimeUse }): Polling {
  const { clock, oneTimeUse } = deps
  return {
    async poll({ client, found, store, texts, issue, grantType, ctx }) {
      const now = clock.now()
      if (!found || found.clientId !== client.clientId) throw new OAuthError('invalid_grant', texts.unknown)
      if (found.consumedAt !== undefined) {
        // A poll that was in flight when the grant was redeemed is too fast, not a replay.
        if (now < found.consumedAt + Math.min(REDEMPTION_GRACE_MS, found.intervalSeconds * 1000)) throw slowDown(found.intervalSeconds)
        return oneTimeUse.replayed(found.familyId, texts.usedAgain, who())
      }
      if (found.expiresAt <= now) throw new OAuthError('expired_token', texts.expired)
      const record = await store.recordPoll(found.id, now)
      if (!record) throw new OAuthError('invalid_grant', texts.unknown)
      if (!record.accepted) throw slowDown(record.intervalSeconds)
      if (found.status === 'denied') throw new OAuthError('access_denied', texts.denied)
      if (found.status === 'pending') throw new OAuthError('authorization_pending')
      return oneTimeUse.redeem({
        familyId: found.familyId,
        consume: () => store.consume(found.id, now),
        issue,
        usedAgain: texts.usedAgain,
        who: who(),
      })

      function who(): Who {
        return { clientId: client.clientId, subject: found?.subjectId, grantType, address: ctx?.address, requestId: ctx?.requestId }
      }
    },
  }
}

function slowDown(intervalSeconds: number): OAuthError {
  return new OAuthError('slow_down', `poll at most every ${intervalSeconds} seconds`)
}
