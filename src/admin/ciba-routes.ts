// /admin/ciba-requests: list (limit, cursor, clientId, subjectId, username, status), GET one,
// POST …/approve and …/deny. Parse, call the service (src/admin/ciba.ts), reply.
import type { FastifyInstance } from 'fastify'
import { ADMIN_CIBA_REQUESTS_PATH } from '../endpoints.js'
import { CibaListQuery, createCibaAdmin } from './ciba.js'
import type { AdminDeps } from './deps.js'
import { callerOf, parsed } from './request.js'

const ONE = `${ADMIN_CIBA_REQUESTS_PATH}/:requestId`
type One = { Params: { requestId: string } }
export const CIBA_DECISIONS = ['approve', 'deny'] as const

export async function cibaRoutes(app: FastifyInstance, opts: { deps: AdminDeps }) {
  const ciba = createCibaAdmin(opts.deps)

  app.get(ADMIN_CIBA_REQUESTS_PATH, async (req) => ciba.list(parsed(CibaListQuery, req.query, 'query')))
  app.get<One>(ONE, async (req) => ciba.get(req.params.requestId))
  for (const decision of CIBA_DECISIONS) {
    app.post<One>(`${ONE}/${decision}`, async (req) =>
      ciba.decide(req.params.requestId, decision, callerOf(req), { address: req.ip, requestId: req.id }),
    )
  }
}
