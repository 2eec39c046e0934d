// Checks a seed file can apply cleanly: no duplicate keys, every scope reference resolves (to the
// file or to what is already stored), no username that would change its subject and no subject id
// that belongs to another user. They read the keys of the file as it is, valid or not (seedKeys),
// so that they report their problems in the same run as the schema's.
import { isAdminScope } from '../domain/admin-scopes.js'
import { isPublicClient } from '../domain/public-client.js'
import type { ExistingUser } from '../stores/seed.postgres.js'
import type { SeedInput } from './schema.js'

export interface Existing {
  apiScopes: Set<string>
  identityResources: Set<string>
  users: ExistingUser[]
}

/** The names a file defines and refers to, by position; undefined where an entry has none of the right type. */
export interface SeedKeys {
  apiScopes: (string | undefined)[]
  apiResources: { name: string | undefined; scopes: (string | undefined)[] }[]
  identityResources: (string | undefined)[]
  clients: { clientId: string | undefined; allowedScopes: (string | undefined)[] }[]
  users: { subjectId: string | undefined; username: string | undefined }[]
  identityProviders: (string | undefined)[]
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined)
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
const field = (o: unknown, key: string): unknown =>
  typeof o === 'object' && o !== null && !Array.isArray(o) ? (o as Record<string, unknown>)[key] : undefined

/** The keys of `input`, a parsed seed or any JSON value. */
export function seedKeys(input: unknown): SeedKeys {
  return {
    apiScopes: list(field(input, 'apiScopes')).map((s) => str(field(s, 'name'))),
    apiResources: list(field(input, 'apiResources')).map((r) => ({ name: str(field(r, 'name')), scopes: list(field(r, 'scopes')).map(str) })),
    identityResources: list(field(input, 'identityResources')).map((r) => str(r) ?? str(field(r, 'name'))),
    clients: list(field(input, 'clients')).map((c) => ({ clientId: str(field(c, 'clientId')), allowedScopes: list(field(c, 'allowedScopes')).map(str) })),
    users: list(field(input, 'users')).map((u) => ({ subjectId: str(field(u, 'subjectId')), username: str(field(u, 'username')) })),
    identityProviders: list(field(input, 'identityProviders')).map((p) => str(field(p, 'scheme'))),
  }
}

function duplicates<T>(items: readonly T[], key: (t: T) => string | undefined, path: (i: number) => string, what: string): string[] {
  const seen = new Set<string>()
  const problems: string[] = []
  items.forEach((item, i) => {
    const k = key(item)
    if (k === undefined) return
    if (seen.has(k)) problems.push(`${path(i)}: duplicate ${what} "${k}"`)
    seen.add(k)
  })
  return problems
}

export function checkDuplicates(keys: SeedKeys): string[] {
  return [
    ...duplicates(keys.apiScopes, (s) => s, (i) => `apiScopes[${i}].name`, 'api scope'),
    ...duplicates(keys.apiResources, (r) => r.name, (i) => `apiResources[${i}].name`, 'api resource'),
    ...duplicates(keys.identityResources, (r) => r, (i) => `identityResources[${i}]`, 'identity resource'),
    ...duplicates(keys.clients, (c) => c.clientId, (i) => `clients[${i}].clientId`, 'client'),
    ...duplicates(keys.users, (u) => u.username, (i) => `users[${i}].username`, 'username'),
    ...duplicates(keys.users, (u) => u.subjectId, (i) => `users[${i}].subjectId`, 'subject id'),
    ...duplicates(keys.identityProviders, (p) => p, (i) => `identityProviders[${i}].scheme`, 'identity provider'),
  ]
}

const defined = (names: (string | undefined)[]) => names.filter((n) => n !== undefined)

export function checkReferences(keys: SeedKeys, existing: Existing): string[] {
  const problems: string[] = []
  const apiScopes = new Set([...existing.apiScopes, ...defined(keys.apiScopes)])
  const identity = new Set([...existing.identityResources, ...defined(keys.identityResources)])
  keys.apiResources.forEach((r, i) =>
    r.scopes.forEach((s, j) => {
      if (s !== undefined && !apiScopes.has(s)) problems.push(`apiResources[${i}].scopes[${j}]: "${s}" is not an api scope`)
    }),
  )
  keys.clients.forEach((c, i) =>
    c.allowedScopes.forEach((s, j) => {
      if (s !== undefined && !apiScopes.has(s) && !identity.has(s) && !isAdminScope(s)) {
        problems.push(`clients[${i}].allowedScopes[${j}]: "${s}" is neither an api scope nor an identity resource`)
      }
    }),
  )
  keys.users.forEach((u, i) => {
    // Upserts are keyed by username, and a subject is never reassigned (OpenID Connect Core §2): a
    // username stays with its subject, and a subject id held by another user makes no second user.
    const named = existing.users.find((e) => e.username === u.username && e.subjectId !== u.subjectId)
    if (named && u.subjectId !== undefined) {
      problems.push(
        `users[${i}].subjectId: user "${u.username}" has subject "${named.subjectId}", and a subject never changes (OpenID Connect Core §2): ` +
          `write "${named.subjectId}" here, or another username for another user`,
      )
    }
    const holder = existing.users.find((e) => e.subjectId === u.subjectId && e.username !== u.username)
    if (holder && u.username !== undefined) problems.push(`users[${i}].subjectId: "${u.subjectId}" already belongs to user "${holder.username}"`)
  })
  return problems
}

/**
 * Settings a valid file asks for that the server overrides: a public client (requireClientSecret
 * false) gets PKCE and refresh token rotation whatever it says (src/domain/public-client.ts). Such a
 * file still applies, since refusing it would break seed files that worked before these rules; the
 * caller logs each sentence, so that the file's author learns the setting has no effect. So too a
 * client's identityProviderRestrictions naming a scheme that is neither in the file nor stored
 * (`storedSchemes`): allowed, as in Duende, but no sign-in can use it.
 */
export function seedWarnings(seed: SeedInput, storedSchemes: readonly string[] = []): string[] {
  const warnings: string[] = []
  // Allowed (Duende's rule, and a provider may be added later), but no sign-in can use it yet.
  const schemes = new Set([...storedSchemes, ...seed.identityProviders.map((p) => p.scheme)])
  seed.clients.forEach((c, i) =>
    c.identityProviderRestrictions.forEach((s, j) => {
      if (!schemes.has(s)) warnings.push(`clients[${i}].identityProviderRestrictions[${j}]: client "${c.clientId}" names "${s}", which is not an identity provider`)
    }),
  )
  seed.clients.forEach((c, i) => {
    if (!isPublicClient(c)) return
    if (!c.requirePkce) {
      warnings.push(`clients[${i}].requirePkce: client "${c.clientId}" is public (requireClientSecret false), so PKCE is required of it anyway (RFC 9700 §2.1.1); false has no effect`)
    }
    if (c.refreshTokenUsage === 'reUse') {
      warnings.push(`clients[${i}].refreshTokenUsage: client "${c.clientId}" is public (requireClientSecret false), so its refresh tokens rotate anyway (RFC 9700 §4.14.2); reUse has no effect`)
    }
  })
  return warnings
}
