// API scopes, API resources (with their scopes and secrets) and identity resources: the
// catalogue scope validation works from. Small enough to load whole.
import type { Queryable } from '../db/db.js'
import type { ApiResource, ApiScope, IdentityResource } from '../domain/types.js'
import type { CatalogueKind, ResourceCatalogue, ResourceStore } from './resources.js'
import { secretsJsonAgg, toSecret, type SecretJson } from './columns.postgres.js'

interface ApiScopeRow {
  name: string
  display_name: string | null
  description: string | null
  enabled: boolean
}

interface ApiResourceRow {
  name: string
  display_name: string | null
  enabled: boolean
  scopes: string[] | null
  secrets: SecretJson[] | null
}

interface IdentityResourceRow {
  name: string
  display_name: string | null
  description: string | null
  claims: string[]
  enabled: boolean
}

// One round trip per API resource lookup: scopes and secrets folded in as arrays.
const SELECT_API_RESOURCE = `
  SELECT r.name, r.display_name, r.enabled,
    (SELECT array_agg(rs.scope_name ORDER BY rs.scope_name)
     FROM api_resource_scopes rs WHERE rs.api_resource_name = r.name) AS scopes,
    ${secretsJsonAgg('api_resource_secrets', 'api_resource_name', 'r.name')} AS secrets
  FROM api_resources r`

function toApiScope(r: ApiScopeRow): ApiScope {
  return { name: r.name, displayName: r.display_name ?? undefined, description: r.description ?? undefined, enabled: r.enabled }
}

function toApiResource(r: ApiResourceRow): ApiResource {
  return {
    name: r.name,
    displayName: r.display_name ?? undefined,
    enabled: r.enabled,
    scopes: r.scopes ?? [],
    secrets: (r.secrets ?? []).map(toSecret),
  }
}

function toIdentityResource(r: IdentityResourceRow): IdentityResource {
  return {
    name: r.name,
    displayName: r.display_name ?? undefined,
    description: r.description ?? undefined,
    claims: r.claims,
    enabled: r.enabled,
  }
}

const TABLES: Record<CatalogueKind, string> = {
  apiScopes: 'api_scopes',
  apiResources: 'api_resources',
  identityResources: 'identity_resources',
}

export function createPgResourceStore(db: Queryable): ResourceStore {
  return {
    async loadCatalogue(): Promise<ResourceCatalogue> {
      const scopes = await db.query<ApiScopeRow>('SELECT name, display_name, description, enabled FROM api_scopes ORDER BY name')
      const apis = await db.query<ApiResourceRow>(`${SELECT_API_RESOURCE} ORDER BY r.name`)
      const ids = await db.query<IdentityResourceRow>(
        'SELECT name, display_name, description, claims, enabled FROM identity_resources ORDER BY name',
      )
      return {
        apiScopes: new Map(scopes.rows.map((r) => [r.name, toApiScope(r)])),
        apiResources: new Map(apis.rows.map((r) => [r.name, toApiResource(r)])),
        identityResources: new Map(ids.rows.map((r) => [r.name, toIdentityResource(r)])),
      }
    },
    async findApiResource(name) {
      const { rows } = await db.query<ApiResourceRow>(`${SELECT_API_RESOURCE} WHERE r.name = $1`, [name])
      return rows[0] && toApiResource(rows[0])
    },
    async remove(kind, name) {
      const { rowCount } = await db.query(`DELETE FROM ${TABLES[kind]} WHERE name = $1`, [name])
      return rowCount === 1
    },
  }
}
