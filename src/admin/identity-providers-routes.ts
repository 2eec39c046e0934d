// /admin/identity-providers: list (limit, cursor, enabled), GET / PUT / DELETE one, GET whether
// one has a client secret (…/client-secret: the secret itself is write-only). Parse, call the
// service (src/admin/identity-providers.ts), reply: ETag on every answer that is one provider.
import type { FastifyInstance } from 'fastify'
import { ADMIN_IDENTITY_PROVIDERS_PATH } from '../endpoints.js'
import type { AdminDeps } from './deps.js'
import { createIdentityProviderAdmin } from './identity-providers.js'
import { ListQuery } from './paging.js'
import { callerOf, parsed, preconditionsOf } from './request.js'

const ONE = `${ADMIN_IDENTITY_PROVIDERS_PATH}/:scheme`
type One = { Params: { scheme: string } }

export async function identityProviderRoutes(app: FastifyInstance, opts: { deps: AdminDeps }) {
  const providers = createIdentityProviderAdmin(opts.deps)

  app.get(ADMIN_IDENTITY_PROVIDERS_PATH, async (req) => providers.list(parsed(ListQuery, req.query, 'query')))

  app.get<One>(ONE, async (req, reply) => {
    const { body, etag } = await providers.get(req.params.scheme)
    return reply.header('etag', etag).send(body)
  })

  app.get<One>(`${ONE}/client-secret`, async (req) => providers.clientSecret(req.params.scheme))

  app.put<One>(ONE, async (req, reply) => {
    const scheme = req.params.scheme
    const w = await providers.put(scheme, req.body, preconditionsOf(req), callerOf(req))
    if (w.status === 201) reply.header('location', `${ADMIN_IDENTITY_PROVIDERS_PATH}/${encodeURIComponent(scheme)}`)
    return reply.code(w.status).header('etag', w.etag).send(w.body)
  })

  app.delete<One>(ONE, async (req, reply) => {
    await providers.remove(req.params.scheme, preconditionsOf(req), callerOf(req))
    return reply.code(204).send()
  })
}
