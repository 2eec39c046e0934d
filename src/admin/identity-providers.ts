// /admin/identity-providers: the upstream OpenID Connect providers people sign in through, in the
// seed file's shape (src/seed/schema.ts SeedIdentityProvider). The client secret is write-only: an
// answer carries neither it nor its encrypted form; a PUT may give it (encrypted at rest with
// KEY_ENCRYPTION_SECRET, as the seed file's are), and one without it keeps the stored one, so that
// what GET answered can be put back. Writes as the clients' (src/admin/clients.ts). Every replica
// drops what it keeps of a provider when the change commits (migration 0034's NOTIFY).
import type { IdentityProvider } from '../domain/types.js'
import { SeedIdentityProvider } from '../seed/schema.js'
import type { Written } from './clients.js'
import type { AdminCaller, AdminDeps } from './deps.js'
import { checkPreconditions, createEtagOf, type Preconditions } from './etag.js'
import { page, type ListQuery } from './paging.js'
import { notFound } from './problem.js'
import { applying, changedFields, checkShape, withKey } from './resource.js'

export const providerView = (p: IdentityProvider): Record<string, unknown> => ({
  scheme: p.scheme,
  displayName: p.displayName,
  type: p.type,
  authority: p.authority,
  clientId: p.clientId,
  scope: p.scope,
  enabled: p.enabled,
  emailDomains: p.emailDomains,
  linkByVerifiedEmail: p.linkByVerifiedEmail,
})
/** The stored secret (ciphertext when encrypted) only feeds the ETag's keyed MAC (src/admin/etag.ts), so that a new secret changes it. */
const hidden = (p: IdentityProvider | undefined) => (p?.clientSecret ? [p.clientSecret.value, p.clientSecret.encrypted] : null)

export function createIdentityProviderAdmin(deps: AdminDeps) {
  const etagOf = createEtagOf(deps.etagKey)
  const tagOf = (p: IdentityProvider) => etagOf(providerView(p), hidden(p))
  const audit = (caller: AdminCaller, scheme: string, action: string, changes: string[]) =>
    deps.audit.emit({ event: 'admin.changed', clientId: caller.clientId, resource: `identity-providers/${scheme}`, action, changes })

  return {
    async list(q: ListQuery) {
      const all = (await deps.read.identityProviders.list()).filter((p) => q.enabled === undefined || String(p.enabled) === q.enabled)
      const p = page(all, (x) => x.scheme, q)
      return { ...p, items: p.items.map(providerView) }
    },

    async get(scheme: string) {
      const p = await deps.read.identityProviders.findByScheme(scheme)
      if (!p) throw notFound('identity provider')
      return { body: providerView(p), etag: tagOf(p) }
    },

    /** Whether a client secret is stored (never the secret): what `authz providers list` shows. */
    async clientSecret(scheme: string) {
      const p = await deps.read.identityProviders.findByScheme(scheme)
      if (!p) throw notFound('identity provider')
      return { set: p.clientSecret !== undefined }
    },

    async put(scheme: string, body: unknown, pre: Preconditions, caller: AdminCaller): Promise<Written> {
      const input = withKey(body, 'scheme', scheme)
      checkShape(SeedIdentityProvider, input)
      return deps.write(async (w) => {
        const before = await w.identityProviders.findByScheme(scheme)
        checkPreconditions(pre, before && tagOf(before))
        await applying('identityProviders[0]', () => w.applySeed({ identityProviders: [input] }))
        const after = (await w.identityProviders.findByScheme(scheme))!
        // GCM ciphertexts differ at every encryption: the secret changed only when it was given
        // and the stored one was replaced (the seed keeps a stored one that decrypts to it).
        const secret = [hidden(before), hidden(after)] as [unknown, unknown]
        const changes = changedFields(before && providerView(before), providerView(after), secret, 'clientSecret')
        if (!before || changes.length > 0) audit(caller, scheme, before ? 'replace' : 'create', changes)
        return { status: before ? 200 : 201, body: providerView(after), etag: tagOf(after) }
      })
    },

    async remove(scheme: string, pre: Preconditions, caller: AdminCaller): Promise<void> {
      await deps.write(async (w) => {
        const before = await w.identityProviders.findByScheme(scheme)
        if (!before) throw notFound('identity provider')
        checkPreconditions(pre, tagOf(before))
        await w.identityProviders.remove(scheme)
        audit(caller, scheme, 'delete', [])
      })
    },
  }
}
