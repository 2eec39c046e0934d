// What a person reads about each scope on a decision screen (CIBA approval, authorization,
// device): the seeded displayName and description of the API scope or identity resource. The
// page adds, in the person's language, the texts of the standard OpenID Connect scopes (OIDC
// Core §5.4, §11) where the seed has none, else the name (src/pages/scopes.ts).
import type { ResourceCatalogue } from '../stores/resources.js'

export interface ScopeDescription {
  name: string
  /** The seeded short label, when there is one; the page falls back to its standard text or the name. */
  displayName: string | undefined
  /** The seeded longer sentence, when there is one; the page falls back to its standard text. */
  description: string | undefined
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
    out.push({ name, displayName: present(seeded?.displayName), description: present(seeded?.description) })
  }
  return out
}
