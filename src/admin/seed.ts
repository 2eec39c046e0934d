// PUT /admin/seed: a whole seed document applied in one transaction, as SEED_FILE and `authz seed`
// apply it (docs/seed-file.md): checked whole first, every problem answered with its JSON path,
// nothing written unless all of it is valid. One audit event names the entries the document holds.
import { z } from 'zod'
import type { AdminCaller, AdminDeps } from './deps.js'
import { applying } from './resource.js'
import type { SeedApplied } from './deps.js'

/** The entries a document names, as admin API paths below /admin (clients/backend). */
function named(input: unknown): string[] {
  const doc = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {}
  const list = (key: string, path: string, field: string) =>
    (Array.isArray(doc[key]) ? (doc[key] as unknown[]) : []).map((e) => {
      const v = typeof e === 'string' ? e : typeof e === 'object' && e !== null ? (e as Record<string, unknown>)[field] : undefined
      return `${path}/${String(v)}`
    })
  return [
    ...list('apiScopes', 'api-scopes', 'name'),
    ...list('apiResources', 'api-resources', 'name'),
    ...list('identityResources', 'identity-resources', 'name'),
    ...list('clients', 'clients', 'clientId'),
    ...list('users', 'users', 'username'),
    ...list('identityProviders', 'identity-providers', 'scheme'),
  ]
}

const count = z.number().int().min(0)
/** The answer of PUT /admin/seed: the entries of each kind the document held, and the seed's warnings. */
export const SeedAppliedView = z.strictObject({
  apiScopes: count,
  apiResources: count,
  identityResources: count,
  clients: count,
  users: count,
  identityProviders: count,
  warnings: z.array(z.string()).describe('settings the document asks for that the server overrides'),
})

export function createSeedAdmin(deps: AdminDeps) {
  return {
    async apply(input: unknown, caller: AdminCaller): Promise<SeedApplied> {
      return deps.write(async (w) => {
        let applied: SeedApplied | undefined
        await applying('', async () => {
          applied = await w.applySeedDocument(input)
        })
        deps.audit.emit({
          event: 'admin.changed',
          clientId: caller.clientId,
          resource: 'seed',
          action: 'apply-seed',
          changes: named(input),
        })
        return applied!
      })
    },
  }
}
