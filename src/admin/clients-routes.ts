// /admin/clients: list (limit, cursor, enabled), GET / PUT / DELETE one, GET and POST …/secrets.
// Parse, call the service (src/admin/clients.ts), reply: ETag on every answer that is one client.
import type { FastifyInstance } from 'fastify'
import { ADMIN_CLIENTS_PATH } from '../endpoints.js'
import { createClientAdmin, NewSecret } from './clients.js'
import type { AdminDeps } from './deps.js'
import { ListQuery } from './paging.js'
import { callerOf, parsed, preconditionsOf } from './request.js'

const ONE = `${ADMIN_CLIENTS_PATH}/:clientId`
type One = { Params: { clientId: string } }

export async function clientRoutes(app: FastifyInstance, opts: { deps: AdminDeps }) {
  const clients = createClientAdmin(opts.deps)

  app.get(ADMIN_CLIENTS_PATH, async (req) => clients.list(parsed(ListQuery, req.query, 'query')))

  app.get<One>(ONE, async (req, reply) => {
    const { body, etag } = await clients.get(req.params.clientId)
    return reply.header('etag', etag).send(body)
  })

  app.put<One>(ONE, async (req, reply) => {
    const id = req.params.clientId
    const w = await clients.put(id, req.body, preconditionsOf(req), callerOf(req))
    if (w.status === 201) reply.header('location', `${ADMIN_CLIENTS_PATH}/${encodeURIComponent(id)}`)
    return reply.code(w.status).header('etag', w.etag).send(w.body)
  })

  app.delete<One>(ONE, async (req, reply) => {
    await clients.remove(req.params.clientId, preconditionsOf(req), callerOf(req))
    return reply.code(204).send()
  })

  app.get<One>(`${ONE}/secrets`, async (req) => clients.secrets(req.params.clientId))

  app.post<One>(`${ONE}/secrets`, async (req, reply) => {
    const body = parsed(NewSecret, req.body ?? {}, 'request body')
    const { secret, etag } = await clients.addSecret(req.params.clientId, body, preconditionsOf(req), callerOf(req))
    return reply.code(201).header('etag', etag).send(secret)
  })
}
