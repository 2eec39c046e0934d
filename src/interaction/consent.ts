// Consent (OpenID Connect Core §3.1.2.4): whether a person must be asked before a client gets
// the scopes it requests, and what the person decided. Remembered consent lasts until revoked.
// No Fastify types: the authorization endpoint, the device flow and the CLI use it alike.
//
// What needs consent, when the client has requireConsent:
// - every requested scope, openid included: even openid alone hands the client the user's
//   identifier (`sub`), which is exactly what a person is asked about (Duende and
//   node-oidc-provider both ask for openid);
// - offline_access like any other scope (OIDC Core §11: the server obtains consent for it unless
//   "other conditions ... permitting offline access" are in place; a remembered grant of
//   offline_access to this client is such a condition). Duende goes further and asks for
//   offline_access every time; we ask once and remember, as for every other scope.
// A client without requireConsent is trusted by its configuration: never asked.
import type { Clock } from '../domain/clock.js'
import type { Client } from '../domain/types.js'
import type { Consent, ConsentStore } from '../stores/consents.js'

export interface ConsentService {
  /** The requested scopes the user has not yet granted this client; [] when no consent is needed. */
  missing(client: Pick<Client, 'clientId' | 'requireConsent'>, subjectId: string, scopes: readonly string[]): Promise<string[]>
  /** Whether the user must be asked before the client gets `scopes`. */
  required(client: Pick<Client, 'clientId' | 'requireConsent'>, subjectId: string, scopes: readonly string[]): Promise<boolean>
  /**
   * Records the user's approval of `scopes`. With `remember` the scopes join what the user has
   * granted the client before (until revoked); without it nothing is stored: the approval covers
   * only the request at hand, and consent remembered earlier is left as it was. Returns the
   * consent as stored, or undefined when nothing was stored.
   */
  grant(subjectId: string, clientId: string, scopes: readonly string[], remember: boolean): Promise<Consent | undefined>
  /** The user's remembered consents, by client id. */
  list(subjectId: string): Promise<Consent[]>
  /** Forgets the consent for one client, or for every client when clientId is omitted; returns how many. */
  revoke(subjectId: string, clientId?: string): Promise<number>
}

export interface ConsentDeps {
  clock: Clock
  consents: ConsentStore
}

/** Scope names without empties and repeats, in the order given. */
function distinct(scopes: readonly string[]): string[] {
  return [...new Set(scopes.filter((s) => s !== ''))]
}

export function createConsentService(deps: ConsentDeps): ConsentService {
  const service: ConsentService = {
    async missing(client, subjectId, scopes) {
      const requested = distinct(scopes)
      if (!client.requireConsent || requested.length === 0) return []
      const granted = (await deps.consents.find(subjectId, client.clientId))?.scopes ?? []
      return requested.filter((s) => !granted.includes(s))
    },
    async required(client, subjectId, scopes) {
      return (await service.missing(client, subjectId, scopes)).length > 0
    },
    async grant(subjectId, clientId, scopes, remember) {
      const names = distinct(scopes)
      if (!remember || names.length === 0) return undefined
      return deps.consents.grant(subjectId, clientId, names, deps.clock.now())
    },
    list: (subjectId) => deps.consents.list(subjectId),
    revoke: (subjectId, clientId) => deps.consents.revoke(subjectId, clientId),
  }
  return service
}
