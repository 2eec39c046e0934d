// Checks a parsed seed file can apply cleanly: no duplicate keys, every scope reference resolves
// (to the file or to what is already stored), no username that would change its subject and no
// subject id that belongs to another user.
import { isPublicClient } from '../domain/public-client.js'
import type { ExistingUser } from '../stores/seed.postgres.js'
import type { SeedInput } from './schema.js'

export interface Existing {
  apiScopes: Set<string>
  identityResources: Set<string>
  users: ExistingUser[]
}

const idName = (r: SeedInput['identityResources'][number]) => (typeof r === 'string' ? r : r.name)

function duplicates<T>(items: readonly T[], key: (t: T) => string, path: (i: number) => string, what: string): string[] {
  const seen = new Set<string>()
  const problems: string[] = []
  items.forEach((item, i) => {
    const k = key(item)
    if (seen.has(k)) problems.push(`${path(i)}: duplicate ${what} "${k}"`)
    seen.add(k)
  })
  return problems
}

export function checkDuplicates(seed: SeedInput): string[] {
  return [
    ...duplicates(seed.apiScopes, (s) => s.name, (i) => `apiScopes[${i}].name`, 'api scope'),
    ...duplicates(seed.apiResources, (r) => r.name, (i) => `apiResources[${i}].name`, 'api resource'),
    ...duplicates(seed.identityResources, idName, (i) => `identityResources[${i}]`, 'identity resource'),
    ...duplicates(seed.clients, (c) => c.clientId, (i) => `clients[${i}].clientId`, 'client'),
    ...duplicates(seed.users, (u) => u.username, (i) => `users[${i}].username`, 'username'),
    ...duplicates(seed.users, (u) => u.subjectId, (i) => `users[${i}].subjectId`, 'subject id'),
  ]
}

export function checkReferences(seed: SeedInput, existing: Existing): string[] {
  const problems: string[] = []
  const apiScopes = new Set([...existing.apiScopes, ...seed.apiScopes.map((s) => s.name)])
  const identity = new Set([...existing.identityResources, ...seed.identityResources.map(idName)])
  seed.apiResources.forEach((r, i) =>
    r.scopes.forEach((s, j) => {
      if (!apiScopes.has(s)) problems.push(`apiResources[${i}].scopes[${j}]: "${s}" is not an api scope`)
    }),
  )
  seed.clients.forEach((c, i) =>
    c.allowedScopes.forEach((s, j) => {
      if (!apiScopes.has(s) && !identity.has(s)) {
        problems.push(`clients[${i}].allowedScopes[${j}]: "${s}" is neither an api scope nor an identity resource`)
      }
    }),
  )
  seed.users.forEach((u, i) => {
    // Upserts are keyed by username, and a subject is never reassigned (OpenID Connect Core §2): a
    // username stays with its subject, and a subject id held by another user makes no second user.
    const named = existing.users.find((e) => e.username === u.username && e.subjectId !== u.subjectId)
    if (named) {
      problems.push(
        `users[${i}].subjectId: user "${u.username}" has subject "${named.subjectId}", and a subject never changes (OpenID Connect Core §2): ` +
          `write "${named.subjectId}" here, or another username for another user`,
      )
    }
    const holder = existing.users.find((e) => e.subjectId === u.subjectId && e.username !== u.username)
    if (holder) problems.push(`users[${i}].subjectId: "${u.subjectId}" already belongs to user "${holder.username}"`)
  })
  return problems
}

/**
 * Settings a valid file asks for that the server overrides: a public client (requireClientSecret
 * false) gets PKCE and refresh token rotation whatever it says (src/domain/public-client.ts). Such a
 * file still applies, since refusing it would break seed files that worked before these rules; the
 * caller logs each sentence, so that the file's author learns the setting has no effect.
 */
export function seedWarnings(seed: SeedInput): string[] {
  const warnings: string[] = []
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
