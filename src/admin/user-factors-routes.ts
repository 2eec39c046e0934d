// GET /admin/users/{username}/factors and POST …/reset-factors. Parse, call the service
// (src/admin/user-factors.ts), reply.
import type { FastifyInstance } from 'fastify'
import { ADMIN_USERS_PATH } from '../endpoints.js'
import type { AdminDeps } from './deps.js'
import { callerOf } from './request.js'
import { createUserFactorAdmin } from './user-factors.js'

const ONE = `${ADMIN_USERS_PATH}/:username`
type One = { Params: { username: string } }

export async function userFactorRoutes(app: FastifyInstance, opts: { deps: AdminDeps }) {
  const factors = createUserFactorAdmin(opts.deps)

  app.get<One>(`${ONE}/factors`, async (req) => factors.get(req.params.username))
  app.post<One>(`${ONE}/reset-factors`, async (req) =>
    factors.reset(req.params.username, callerOf(req), { address: req.ip, requestId: req.id }),
  )
}
