// What a person reads about each scope on a decision screen (CIBA approval, authorization,
// device): the seeded displayName and description of the API scope or identity resource, else
// a plain default for the standard OpenID Connect scopes (OIDC Core §5.4, §11), else the name.
import type { ResourceCatalogue } from '../stores/resources.js'

export interface ScopeDescription {
  name: string
  /** A short label; never empty (the scope name when nothing better is known). */
  displayName: string
  /** A longer sentence, when there is one. */
  description: string | undefined
}

/** Defaults for the standard scopes, in the words of someone asked to agree to them. */
export const STANDARD_SCOPE_TEXT: Readonly<Record<string, { displayName: string; description: string }>> = {
  openid: { displayName: 'Sign you in', description: 'Your user identifier, so that the app knows it is you' },
  profile: {
    displayName: 'Your profile',
    description: 'Your profile: name, nickname, picture, website, gender, birthdate, time zone and language',
  },
  email: { displayName: 'Your e-mail address', description: 'Your e-mail address and whether it is verified' },
  address: { displayName: 'Your postal address', description: 'Your postal address' },
  phone: { displayName: 'Your phone number', description: 'Your phone number and whether it is verified' },
  offline_access: {
    displayName: 'Stay signed in',
    description: 'Stay signed in (access when you are not using the app)',
  },
}

/** A seeded text counts only when it has something to show. */
function present(s: string | undefined): string | undefined {
  return s !== undefined && s.trim() !== '' ? s : undefined
}

/**
 * One entry per distinct, non-empty name, in the order given. An identity resource and an API
 * scope of the same name cannot both be granted meaningfully; the identity resource is described.
 */
export function describeScopes(
  catalogue: Pick<ResourceCatalogue, 'apiScopes' | 'identityResources'>,
  names: readonly string[],
): ScopeDescription[] {
  const out: ScopeDescription[] = []
  for (const name of new Set(names)) {
    if (name === '') continue
    const seeded = catalogue.identityResources.get(name) ?? catalogue.apiScopes.get(name)
    const standard = Object.hasOwn(STANDARD_SCOPE_TEXT, name) ? STANDARD_SCOPE_TEXT[name] : undefined
    out.push({
      name,
      displayName: present(seeded?.displayName) ?? standard?.displayName ?? name,
      description: present(seeded?.description) ?? standard?.description,
    })
  }
  return out
}
