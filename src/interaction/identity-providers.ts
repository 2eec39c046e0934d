// Which upstream identity providers a sign-in may use (src/flows/federation does the sign-in
// itself). Duende's rules: a client's identityProviderRestrictions lists the schemes it may use,
// and an empty list means all of them; enableLocalLogin false hides the password form. acr_values
// `idp:<scheme>` names a configured, enabled provider the client may use, or `local` (the password
// form only); anything else is invalid_request (src/grants/acr-values.ts).
import type { Client, IdentityProvider } from '../domain/types.js'
import { FEDERATION_CHALLENGE_PATH, federationPath } from '../endpoints.js'
import type { IdentityProviderStore } from '../stores/identity-providers.js'
import type { Session } from './session.js'

/** `idp:local`: the password form only. */
export const LOCAL_IDP = 'local'

/** What a sign-in may offer, from the client of the flow that asks (none: every provider, and the password form). */
export type ProviderPolicy = Pick<Client, 'identityProviderRestrictions' | 'enableLocalLogin'>

export interface IdentityProviderDirectory {
  /** The enabled providers the client may use, by scheme. */
  usable(policy: ProviderPolicy | undefined): Promise<IdentityProvider[]>
  /** The enabled provider of this scheme if the client may use it. */
  find(scheme: string, policy: ProviderPolicy | undefined): Promise<IdentityProvider | undefined>
  /** The schemes `idp:` may name for this client: its usable providers, and `local` when it has local login. */
  idpNames(policy: ProviderPolicy): Promise<ReadonlySet<string>>
}

export function mayUse(policy: ProviderPolicy | undefined, p: IdentityProvider): boolean {
  const allowed = policy?.identityProviderRestrictions ?? []
  return p.enabled && (allowed.length === 0 || allowed.includes(p.scheme))
}

export function createIdentityProviderDirectory(store: IdentityProviderStore): IdentityProviderDirectory {
  const usable = async (policy: ProviderPolicy | undefined) => (await store.list()).filter((p) => mayUse(policy, p))
  return {
    usable,
    async find(scheme, policy) {
      const p = await store.findByScheme(scheme)
      return p && mayUse(policy, p) ? p : undefined
    },
    async idpNames(policy) {
      const names = new Set((await usable(policy)).map((p) => p.scheme))
      if (policy.enableLocalLogin) names.add(LOCAL_IDP)
      return names
    },
  }
}

/** Whether the session began where acr_values idp: asked (a provider's scheme, or local); true when it asked nothing. */
export function signedInAt(session: Pick<Session, 'idp'>, idp: string | undefined): boolean {
  return idp === undefined || (session.idp ?? LOCAL_IDP) === idp
}

/** The provider whose emailDomains hold the domain of `typed`, when it is an email address. */
export function providerForEmail(providers: readonly IdentityProvider[], typed: string): IdentityProvider | undefined {
  const at = typed.lastIndexOf('@')
  if (at <= 0 || at === typed.length - 1) return undefined
  const domain = typed.slice(at + 1).toLowerCase()
  return providers.find((p) => p.emailDomains.includes(domain))
}

/** The link that sends the browser to `scheme`'s sign-in, returning to `returnTo` afterwards. */
export function challengeUrl(scheme: string, returnTo: string | undefined, loginHint?: string): string {
  const q = new URLSearchParams()
  if (returnTo !== undefined) q.set('return_to', returnTo)
  if (loginHint !== undefined && loginHint !== '') q.set('login_hint', loginHint)
  const query = q.toString()
  return `${federationPath(FEDERATION_CHALLENGE_PATH, scheme)}${query ? `?${query}` : ''}`
}

/**
 * Signing out upstream after a session that began there ended here (the federation flow provides
 * it; the logout and sign-out pages use it). Without a provider: nothing to do.
 */
export interface UpstreamSignOut {
  /** Where to send the browser to sign out upstream, coming back to `next` afterwards; undefined: nowhere. */
  url(session: Session, next: string): Promise<string | undefined>
  /** The origin `url` leads to: a form whose answer goes there must allow it in its CSP form-action. */
  origin(session: Session | undefined): Promise<string | undefined>
}

export function createUpstreamSignOut(): UpstreamSignOut & { provide(impl: UpstreamSignOut): void } {
  let impl: UpstreamSignOut | undefined
  return {
    provide(i) {
      impl = i
    },
    url: async (session, next) => impl?.url(session, next),
    origin: async (session) => impl?.origin(session),
  }
}
