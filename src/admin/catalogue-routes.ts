// /admin/api-scopes, /admin/api-resources, /admin/identity-resources: list (limit, cursor,
// enabled), GET / PUT / DELETE one. Parse, call the service (src/admin/catalogue.ts), reply.
import type { FastifyInstance } from 'fastify'
import { CATALOGUE_KINDS, createCatalogueAdmin } from './catalogue.js'
import type { AdminDeps } from './deps.js'
import { ListQuery } from './paging.js'
import { callerOf, parsed, preconditionsOf } from './request.js'

type One = { Params: { name: string } }

export async function catalogueRoutes(app: FastifyInstance, opts: { deps: AdminDeps }) {
  for (const spec of CATALOGUE_KINDS) {
    const entries = createCatalogueAdmin(opts.deps, spec)
    const one = `${spec.path}/:name`

    app.get(spec.path, async (req) => entries.list(parsed(ListQuery, req.query, 'query')))

    app.get<One>(one, async (req, reply) => {
      const { body, etag } = await entries.get(req.params.name)
      return reply.header('etag', etag).send(body)
    })

    app.put<One>(one, async (req, reply) => {
      const name = req.params.name
      const w = await entries.put(name, req.body, preconditionsOf(req), callerOf(req))
      if (w.status === 201) reply.header('location', `${spec.path}/${encodeURIComponent(name)}`)
      return reply.code(w.status).header('etag', w.etag).send(w.body)
    })

    app.delete<One>(one, async (req, reply) => {
      await entries.remove(req.params.name, preconditionsOf(req), callerOf(req))
      return reply.code(204).send()
    })
  }
}
