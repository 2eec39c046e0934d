// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (resources.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.
import type { ApiResource, ApiScope, IdentityResource } from '../domain/types.js'

/** Everything scope validation needs, small enough to keep in memory. */
export interface ResourceCatalogue {
  apiScopes: Map<string, ApiScope>
  apiResources: Map<string, ApiResource>
  identityResources: Map<string, IdentityResource>
}

/** The three kinds of entry of the catalogue, by the name of their table's member. */
export type CatalogueKind = 'apiScopes' | 'apiResources' | 'identityResources'

export interface ResourceStore {
  loadCatalogue(): Promise<ResourceCatalogue>
  findApiResource(name: string): Promise<ApiResource | undefined>
  /**
   * Deletes the entry (an API resource with its scope list and secrets; an API scope from every
   * API resource listing it); false when there was none. Clients that list it keep the name, which
   * grants nothing until an entry of that name exists again.
   */
  remove(kind: CatalogueKind, name: string): Promise<boolean>
}
