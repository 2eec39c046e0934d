// Use once, revoke the family (RFC 6749 §4.1.2 and §10.5, RFC 9700 §4.14.2, OpenID CIBA Core 1.0
// §7.3): the one place where an artefact redeemed for tokens (a CIBA auth_req_id, a device code
// and a refresh token now; an authorization code next) is used exactly once, and where a
// second use revokes everything issued from it. Every grant with a one-time artefact uses this;
// none keeps a copy of these rules.
//
// A family is everything issued from one grant. Its id is fixed when the artefact is created (the
// CIBA request's family_id; the authorization code's or device code's row) and every token issued
// from the artefact, every rotated refresh token included, is issued into it.
//
// How a grant uses it (the authorization_code grant shown; polled grants, CIBA and device_code, go
// through polling.ts, which does the same):
//
//   const code = await grants.find(params.code, 'authorization_code')
//   if (!code || code.clientId !== client.clientId) throw new OAuthError('invalid_grant', '…')
//   if (code.consumedAt !== undefined) return once.replayed(code.familyId, 'authorization code already used')
//   …checks that change nothing: expiry, redirect_uri, PKCE…
//   return once.redeem({
//     familyId: code.familyId,
//     consume: () => grants.consume(params.code, 'authorization_code', now),
//     issue: (consumed) => tokens.issue({ client, subjectId: consumed.subjectId, granted, familyId: code.familyId, refreshToken: true }),
//     usedAgain: 'authorization code already used',
//   })
//
// What each guarantee rests on:
// - Exactly once: `consume` is the artefact's own single statement (UPDATE … WHERE consumed_at IS
//   NULL RETURNING …), so of concurrent redemptions one gets the artefact and every other one gets
//   undefined, which is a second use.
// - A second use (seen at lookup: `replayed`; or the lost consume inside `redeem`) revokes the
//   family (GrantStore.revokeFamily: marked revoked, its tokens deleted, its JWT access tokens'
//   jtis revoked on every replica and on this one at once) and answers invalid_grant.
// - No token issued by a racing winner survives: `issue` must issue through TokenIssuer.issue with
//   the same familyId, which stores the response's tokens with GrantStore.issueIntoFamily. That
//   statement and revokeFamily lock the family's row, so a revocation either deletes what the
//   winner stored, or the winner stores nothing and answers invalid_grant (the tokens it signed
//   never leave the server). Never store a family's tokens any other way.
// - Revocations from outside (RFC 7009 of a refresh token) call `revokeFamily` here too.
import type { Clock } from '../domain/clock.js'
import type { AuditEvent, AuditSink } from '../observe/audit.js'
import { OAuthError } from '../errors.js'
import type { GrantStore } from '../stores/grants.js'
import type { TokenResponse } from '../tokens/issuer.js'

export interface Redemption<A> {
  /** The family the artefact issues into (and that a second use revokes). */
  familyId: string
  /** Marks the artefact used in one statement; undefined when it was used already (or is gone). */
  consume(): Promise<A | undefined>
  /** Issues the response into `familyId` through TokenIssuer.issue. */
  issue(artefact: A): Promise<TokenResponse>
  /** error_description of the invalid_grant a second use gets (RFC 6749 §5.2: a fixed ASCII sentence). */
  usedAgain: string
  /** Who redeemed it, for the audit event of a second use (grant.family_revoked). */
  who?: Who
}

/** The audit fields of a redemption: the client, the subject, the grant and where the request came from. */
export type Who = Pick<AuditEvent, 'clientId' | 'subject' | 'grantType' | 'address' | 'requestId'>

export interface OneTimeUse {
  /** Consumes the artefact once and issues from it; a lost consume is a second use. */
  redeem<A>(r: Redemption<A>): Promise<TokenResponse>
  /** A second use found at lookup: revokes the family and throws invalid_grant. */
  replayed(familyId: string, usedAgain: string, who?: Who): Promise<never>
  /** Revokes everything issued into the family (also RFC 7009 §2.1 for refresh tokens). */
  revokeFamily(familyId: string): Promise<void>
}

export interface OneTimeUseDeps {
  clock: Clock
  grants: Pick<GrantStore, 'revokeFamily'>
  /** This replica's list of revoked JWT access tokens: it knows at once, the others through NOTIFY. */
  revokedJwts: { add(jti: string, expiresAt: number): void }
  audit?: AuditSink
}

export function createOneTimeUse(deps: OneTimeUseDeps): OneTimeUse {
  async function revokeFamily(familyId: string): Promise<void> {
    const { revokedJtis } = await deps.grants.revokeFamily(familyId, deps.clock.now())
    for (const r of revokedJtis) deps.revokedJwts.add(r.jti, r.expiresAt)
  }

  async function replayed(familyId: string, usedAgain: string, who?: Who): Promise<never> {
    await revokeFamily(familyId)
    deps.audit?.emit({ event: 'grant.family_revoked', ...who, reason: 'reuse' })
    throw new OAuthError('invalid_grant', usedAgain)
  }

  return {
    async redeem(r) {
      const artefact = await r.consume()
      if (artefact === undefined) return replayed(r.familyId, r.usedAgain, r.who)
      return r.issue(artefact)
    },
    replayed,
    revokeFamily,
  }
}
