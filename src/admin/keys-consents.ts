// /admin/keys: the signing keys every replica shares (list; rotate: a new key per algorithm,
// published now, signing after KEY_ACTIVATION_DELAY, as `authz keys rotate`), and
// /admin/users/{username}/consents: what a person has allowed which client (list; revoke one or
// all, as `authz consents`). Private key material is never answered.
import { z } from 'zod'
import { SIGNING_ALGS, type SigningAlg } from '../config.js'
import type { KeyInfo } from '../keys/signing-keys.js'
import type { AdminCaller, AdminDeps } from './deps.js'
import { page, type PageQuery } from './paging.js'
import { notFound } from './problem.js'

/** The optional body of POST /admin/keys/rotate. */
export const RotateKeys = z.strictObject({
  alg: z.enum(SIGNING_ALGS).optional().describe('the algorithm to rotate; omitted: every one the server signs with'),
})

const time = z.iso.datetime()
/** A signing key as answered: never key material. */
export const KeyView = z.strictObject({
  kid: z.string(),
  alg: z.enum(SIGNING_ALGS),
  status: z.enum(['pending', 'current', 'retired']).describe('pending: published, not signing yet; current: signs; retired: verifies only'),
  createdAt: time,
  activateAt: time,
  retireAt: time.optional(),
  privateKey: z.enum(['plaintext', 'encrypted', 'erased']).describe('how its private part is stored'),
  encrypted: z.boolean().describe('whether its private part is encrypted at rest (KEY_ENCRYPTION_SECRET)'),
})
export const KeyList = z.strictObject({ items: z.array(KeyView) })

/** A remembered consent as answered. */
export const ConsentView = z.strictObject({ clientId: z.string(), scopes: z.array(z.string()), createdAt: time, updatedAt: time })
export const ConsentList = z.strictObject({
  items: z.array(ConsentView),
  nextCursor: z.string().optional().describe('absent on the last page'),
})
export const Revoked = z.strictObject({ revoked: z.number().int().min(0).describe('how many consents were forgotten') })

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString())
export const keyView = (k: KeyInfo): z.infer<typeof KeyView> => ({
  kid: k.kid,
  alg: k.alg,
  status: k.status,
  createdAt: iso(k.createdAt)!,
  activateAt: iso(k.activateAt)!,
  ...(k.retireAt === undefined ? {} : { retireAt: iso(k.retireAt)! }),
  privateKey: k.privateKey,
  encrypted: k.encrypted,
})

export function createKeyAdmin(deps: AdminDeps) {
  return {
    list: async () => ({ items: (await deps.keys.list()).map(keyView) }),
    async rotate(alg: SigningAlg | undefined, caller: AdminCaller) {
      const added = await deps.keys.rotate(alg)
      const kids = added.map((k) => k.kid)
      deps.audit.emit({ event: 'admin.changed', clientId: caller.clientId, resource: 'keys', action: 'rotate', changes: kids })
      return { items: added.map(keyView) }
    },
  }
}

export function createConsentAdmin(deps: AdminDeps) {
  const subjectOf = async (username: string) => {
    const user = await deps.read.users.findByUsername(username)
    if (!user) throw notFound('user')
    return user.subjectId
  }
  return {
    /** The consents by client, a page at a time. */
    async list(username: string, q: PageQuery) {
      const p = page(await deps.consents.list(await subjectOf(username)), (c) => c.clientId, q)
      return {
        ...p,
        items: p.items.map((c) => ({ clientId: c.clientId, scopes: c.scopes, createdAt: iso(c.createdAt), updatedAt: iso(c.updatedAt) })),
      }
    },
    /** Forgets the consent for one client, or for every client; 404 when there was none for that client. */
    async revoke(username: string, clientId: string | undefined, caller: AdminCaller) {
      const n = await deps.consents.revoke(await subjectOf(username), clientId)
      if (clientId !== undefined && n === 0) throw notFound('consent')
      const resource = `users/${username}/consents${clientId === undefined ? '' : `/${clientId}`}`
      if (n > 0) deps.audit.emit({ event: 'admin.changed', clientId: caller.clientId, resource, action: 'delete', changes: [] })
      return n
    },
  }
}
