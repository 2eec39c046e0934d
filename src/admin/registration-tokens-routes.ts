// /admin/registration-tokens: list, POST to create (201, the token answered once), POST
// …/{id}/revoke. Parse, call the service (src/admin/registration-tokens.ts), reply.
import type { FastifyInstance } from 'fastify'
import { ADMIN_REGISTRATION_TOKENS_PATH } from '../endpoints.js'
import type { AdminDeps } from './deps.js'
import { PageQuery } from './paging.js'
import { createRegistrationTokenAdmin, NewRegistrationToken } from './registration-tokens.js'
import { callerOf, parsed } from './request.js'

type One = { Params: { id: string } }

export async function registrationTokenRoutes(app: FastifyInstance, opts: { deps: AdminDeps }) {
  const tokens = createRegistrationTokenAdmin(opts.deps)

  app.get(ADMIN_REGISTRATION_TOKENS_PATH, async (req) => tokens.list(parsed(PageQuery, req.query, 'query')))
  app.post(ADMIN_REGISTRATION_TOKENS_PATH, async (req, reply) => {
    const created = await tokens.create(parsed(NewRegistrationToken, req.body ?? {}, 'request body'), callerOf(req))
    return reply.code(201).send(created)
  })
  app.post<One>(`${ADMIN_REGISTRATION_TOKENS_PATH}/:id/revoke`, async (req) => tokens.revoke(req.params.id, callerOf(req)))
}
