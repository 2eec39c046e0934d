// The applications that can reach a person's account, as the person sees them on the account
// page: those they allowed (remembered consent, OpenID Connect Core §3.1.2.4) and those holding
// live tokens issued for them (a client that never asks for consent still appears), and taking an
// application's access away. Withdrawing access forgets the consent first (the next request asks
// again) and then revokes every grant family issued to that client for the person, as the
// revocation endpoint revokes a refresh token's family (RFC 7009 §2.1): refresh tokens, reference
// tokens and codes are deleted, JWT access tokens' jtis revoked on every replica. A code issued
// before and redeemed after finds its family revoked and issues nothing (src/grants/one-time-use.ts).
import type { Clock } from '../domain/clock.js'
import type { OneTimeUse } from '../grants/one-time-use.js'
import type { GrantStore } from '../stores/grants.js'
import type { ConsentService } from './consent.js'

export interface AppAccessEntry {
  clientId: string
  /** The scopes the person allowed, in the order first granted; [] when the client holds tokens without a remembered consent. */
  scopes: string[]
  /** ms: the consent's first grant, or the oldest live token's issue when there is no consent. */
  since: number
  /** Whether the person's consent is remembered (else the client only holds tokens). */
  remembered: boolean
}

export interface AppAccess {
  /** The person's applications, by client id. */
  list(subjectId: string): Promise<AppAccessEntry[]>
  /** Forgets the consent and revokes every family issued to the client for the person; what was removed. */
  revoke(subjectId: string, clientId: string): Promise<{ consents: number; families: number }>
}

export interface AppAccessDeps {
  clock: Clock
  consent: Pick<ConsentService, 'list' | 'revoke'>
  grants: Pick<GrantStore, 'familiesOf' | 'clientsHolding'>
  oneTimeUse: Pick<OneTimeUse, 'revokeFamily'>
}

export function createAppAccess(deps: AppAccessDeps): AppAccess {
  return {
    async list(subjectId) {
      const [consents, holding] = await Promise.all([deps.consent.list(subjectId), deps.grants.clientsHolding(subjectId, deps.clock.now())])
      const byClient = new Map<string, AppAccessEntry>()
      for (const c of consents) byClient.set(c.clientId, { clientId: c.clientId, scopes: c.scopes, since: c.createdAt, remembered: true })
      for (const h of holding)
        if (!byClient.has(h.clientId)) byClient.set(h.clientId, { clientId: h.clientId, scopes: [], since: h.since, remembered: false })
      return [...byClient.values()].sort((a, b) => (a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0))
    },
    async revoke(subjectId, clientId) {
      const consents = await deps.consent.revoke(subjectId, clientId)
      const families = await deps.grants.familiesOf(subjectId, clientId)
      for (const familyId of families) await deps.oneTimeUse.revokeFamily(familyId)
      return { consents, families: families.length }
    },
  }
}
