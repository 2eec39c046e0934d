// /admin/api-scopes, /admin/api-resources, /admin/identity-resources: the catalogue in the seed
// file's shapes (src/seed/schema.ts), one service for the three kinds. An API resource's secrets
// are write-only, as a client's are. Writes as the clients' (src/admin/clients.ts): one
// transaction, If-Match / If-None-Match, an audit event naming the fields that changed.
import type { z } from 'zod'
import type { ApiResource, ApiScope, IdentityResource } from '../domain/types.js'
import { ADMIN_API_RESOURCES_PATH, ADMIN_API_SCOPES_PATH, ADMIN_IDENTITY_RESOURCES_PATH } from '../endpoints.js'
import { SeedApiResource, SeedApiScope, SeedIdentityResource } from '../seed/schema.js'
import type { CatalogueKind, ResourceCatalogue } from '../stores/resources.js'
import type { Written } from './clients.js'
import type { AdminCaller, AdminDeps } from './deps.js'
import { checkPreconditions, createEtagOf, type Preconditions } from './etag.js'
import { page, type ListQuery } from './paging.js'
import { notFound } from './problem.js'
import { applying, changedFields, checkShape, defined, withKey } from './resource.js'

export interface CatalogueKindSpec<T> {
  kind: CatalogueKind
  /** The collection's path, and its name in audit events (below /admin). */
  path: string
  what: string
  schema: z.ZodType
  entries(cat: ResourceCatalogue): Map<string, T>
  view(t: T): Record<string, unknown>
  /** What the view leaves out and the ETag covers (an API resource's secrets). */
  hidden(t: T | undefined): unknown
  hiddenName: string
}

const apiScopes: CatalogueKindSpec<ApiScope> = {
  kind: 'apiScopes',
  path: ADMIN_API_SCOPES_PATH,
  what: 'api scope',
  schema: SeedApiScope,
  entries: (cat) => cat.apiScopes,
  view: (s) => defined({ name: s.name, displayName: s.displayName, description: s.description, enabled: s.enabled }),
  hidden: () => null,
  hiddenName: '',
}

const apiResources: CatalogueKindSpec<ApiResource> = {
  kind: 'apiResources',
  path: ADMIN_API_RESOURCES_PATH,
  what: 'api resource',
  schema: SeedApiResource,
  entries: (cat) => cat.apiResources,
  view: (r) => defined({ name: r.name, displayName: r.displayName, enabled: r.enabled, scopes: r.scopes }),
  hidden: (r) => r?.secrets.map((s) => [s.valueHash, s.expiresAt ?? null, s.description ?? null]) ?? null,
  hiddenName: 'secrets',
}

const identityResources: CatalogueKindSpec<IdentityResource> = {
  kind: 'identityResources',
  path: ADMIN_IDENTITY_RESOURCES_PATH,
  what: 'identity resource',
  schema: SeedIdentityResource,
  entries: (cat) => cat.identityResources,
  view: (r) => defined({ name: r.name, displayName: r.displayName, description: r.description, claims: r.claims, enabled: r.enabled }),
  hidden: () => null,
  hiddenName: '',
}

export const CATALOGUE_KINDS = [apiScopes, apiResources, identityResources] as readonly CatalogueKindSpec<unknown>[]

export function createCatalogueAdmin<T>(deps: AdminDeps, spec: CatalogueKindSpec<T>) {
  const etagOf = createEtagOf(deps.etagKey)
  const tagOf = (t: T) => etagOf(spec.view(t), spec.hidden(t))
  const find = async (stores: Pick<AdminDeps['read'], 'resources'>, name: string) =>
    spec.entries(await stores.resources.loadCatalogue()).get(name)
  const audit = (caller: AdminCaller, name: string, action: string, changes: string[]) =>
    deps.audit.emit({
      event: 'admin.changed',
      clientId: caller.clientId,
      resource: `${spec.path.slice('/admin/'.length)}/${name}`,
      action,
      changes,
    })

  return {
    async list(q: ListQuery) {
      const all = [...spec.entries(await deps.read.resources.loadCatalogue()).values()].filter(
        (t) => q.enabled === undefined || String(spec.view(t).enabled) === q.enabled,
      )
      const p = page(all, (t) => String(spec.view(t).name), q)
      return { ...p, items: p.items.map(spec.view) }
    },

    async get(name: string) {
      const t = await find(deps.read, name)
      if (t === undefined) throw notFound(spec.what)
      return { body: spec.view(t), etag: tagOf(t) }
    },

    async put(name: string, body: unknown, pre: Preconditions, caller: AdminCaller): Promise<Written> {
      const input = withKey(body, 'name', name)
      checkShape(spec.schema, input)
      return deps.write(async (w) => {
        const before = await find(w, name)
        checkPreconditions(pre, before === undefined ? undefined : tagOf(before))
        await applying(`${spec.kind}[0]`, () => w.applySeed({ [spec.kind]: [input] }))
        const after = (await find(w, name))!
        const beforeView = before === undefined ? undefined : spec.view(before)
        const changes = changedFields(beforeView, spec.view(after), [spec.hidden(before), spec.hidden(after)], spec.hiddenName)
        if (before === undefined || changes.length > 0) audit(caller, name, before === undefined ? 'create' : 'replace', changes)
        return { status: before === undefined ? 201 : 200, body: spec.view(after), etag: tagOf(after) }
      })
    },

    async remove(name: string, pre: Preconditions, caller: AdminCaller): Promise<void> {
      await deps.write(async (w) => {
        const before = await find(w, name)
        if (before === undefined) throw notFound(spec.what)
        checkPreconditions(pre, tagOf(before))
        await w.resources.remove(spec.kind, name)
        audit(caller, name, 'delete', [])
      })
    },
  }
}
