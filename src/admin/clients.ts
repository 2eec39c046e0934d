// /admin/clients: clients in the seed file's shape (src/seed/schema.ts SeedClient). Secrets are
// write-only: a PUT may carry them as a seed file does (omitted: kept), an answer never does (GET
// …/secrets lists only their expiry and note), and POST …/secrets generates one and shows it once. Every write is one transaction, judged against
// If-Match / If-None-Match, and an audit event naming the fields it changed.
import { randomBytes } from 'node:crypto'
import { z } from 'zod'
import type { Client } from '../domain/types.js'
import { SeedClient } from '../seed/schema.js'
import { secretHash } from '../tokens/handles.js'
import type { AdminCaller, AdminDeps } from './deps.js'
import { checkPreconditions, createEtagOf, type Preconditions } from './etag.js'
import { page, type ListQuery } from './paging.js'
import { invalid, notFound } from './problem.js'
import { applying, changedFields, checkShape, defined, withKey } from './resource.js'

/** The optional body of POST …/secrets. */
export const NewSecret = z.strictObject({
  expiration: z.iso.datetime({ offset: true }).optional().describe('when the secret stops working (RFC 3339); omitted: never'),
  description: z.string().max(500).optional(),
})

export const clientView = (c: Client): Record<string, unknown> => {
  const { secrets: _secrets, ...rest } = c
  return defined(rest)
}
const hidden = (c: Client | undefined) => c?.secrets.map((s) => [s.valueHash, s.expiresAt ?? null, s.description ?? null]) ?? null

export interface Written {
  status: 200 | 201
  body: Record<string, unknown>
  etag: string
}

export function createClientAdmin(deps: AdminDeps) {
  const etagOf = createEtagOf(deps.etagKey)
  const tagOf = (c: Client) => etagOf(clientView(c), hidden(c))
  const audit = (caller: AdminCaller, id: string, action: string, changes: string[]) =>
    deps.audit.emit({ event: 'admin.changed', clientId: caller.clientId, resource: `clients/${id}`, action, changes })

  return {
    async list(q: ListQuery) {
      const all = (await deps.read.clients.list()).filter((c) => q.enabled === undefined || String(c.enabled) === q.enabled)
      const p = page(all, (c) => c.clientId, q)
      return { ...p, items: p.items.map(clientView) }
    },

    async get(id: string) {
      const c = await deps.read.clients.findById(id)
      if (!c) throw notFound('client')
      return { body: clientView(c), etag: tagOf(c) }
    },

    /** The client's secrets as far as they are not secret: when each expires, and its note. */
    async secrets(id: string) {
      const c = await deps.read.clients.findById(id)
      if (!c) throw notFound('client')
      return {
        items: c.secrets.map((s) =>
          defined({ expiration: s.expiresAt === undefined ? undefined : new Date(s.expiresAt).toISOString(), description: s.description }),
        ),
      }
    },

    async put(id: string, body: unknown, pre: Preconditions, caller: AdminCaller): Promise<Written> {
      const input = withKey(body, 'clientId', id)
      checkShape(SeedClient, input)
      return deps.write(async (w) => {
        const before = await w.clients.findById(id)
        checkPreconditions(pre, before && tagOf(before))
        await applying('clients[0]', () => w.applySeed({ clients: [input] }))
        const after = (await w.clients.findById(id))!
        const changes = changedFields(before && clientView(before), clientView(after), [hidden(before), hidden(after)], 'secrets')
        if (!before || changes.length > 0) audit(caller, id, before ? 'replace' : 'create', changes)
        return { status: before ? 200 : 201, body: clientView(after), etag: tagOf(after) }
      })
    },

    async remove(id: string, pre: Preconditions, caller: AdminCaller): Promise<void> {
      await deps.write(async (w) => {
        const before = await w.clients.findById(id)
        if (!before) throw notFound('client')
        checkPreconditions(pre, tagOf(before))
        await w.clients.remove(id)
        audit(caller, id, 'delete', [])
      })
    },

    /** Generates a strong secret (32 random bytes, base64url); only its hash is stored. */
    async addSecret(
      id: string,
      opts: { expiration?: string | undefined; description?: string | undefined },
      pre: Preconditions,
      caller: AdminCaller,
    ) {
      const expiresAt = opts.expiration === undefined ? undefined : Date.parse(opts.expiration)
      if (expiresAt !== undefined && expiresAt <= deps.clock.now()) {
        throw invalid([{ path: 'expiration', detail: 'must be in the future' }], 'the request body is not valid')
      }
      return deps.write(async (w) => {
        const before = await w.clients.findById(id)
        if (!before) throw notFound('client')
        checkPreconditions(pre, tagOf(before))
        const value = randomBytes(32).toString('base64url')
        await w.clients.addSecret(id, {
          valueHash: secretHash(value),
          ...(expiresAt !== undefined ? { expiresAt } : {}),
          ...(opts.description !== undefined ? { description: opts.description } : {}),
        })
        audit(caller, id, 'add-secret', ['secrets'])
        const after = (await w.clients.findById(id))!
        const secret = defined({
          value,
          expiration: expiresAt === undefined ? undefined : new Date(expiresAt).toISOString(),
          description: opts.description,
        })
        return { secret, etag: tagOf(after) }
      })
    },
  }
}

export type ClientAdmin = ReturnType<typeof createClientAdmin>
