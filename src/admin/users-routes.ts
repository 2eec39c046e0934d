// /admin/users: list (limit, cursor, enabled), GET / PUT / DELETE one, and the actions
// POST …/disable, …/enable, …/unlock, …/sign-out; GET …/links; GET /admin/lockouts. Parse, call the service (src/admin/users.ts), reply.
import type { FastifyInstance } from 'fastify'
import { ADMIN_LOCKOUTS_PATH, ADMIN_USERS_PATH } from '../endpoints.js'
import type { AdminDeps } from './deps.js'
import { ListQuery, PageQuery } from './paging.js'
import { callerOf, parsed, preconditionsOf } from './request.js'
import { createUserAdmin, type UserAction } from './users.js'

const ONE = `${ADMIN_USERS_PATH}/:username`
type One = { Params: { username: string } }
export const USER_ACTIONS: readonly UserAction[] = ['disable', 'enable', 'unlock', 'sign-out']

export async function userRoutes(app: FastifyInstance, opts: { deps: AdminDeps }) {
  const users = createUserAdmin(opts.deps)

  app.get(ADMIN_USERS_PATH, async (req) => users.list(parsed(ListQuery, req.query, 'query')))
  app.get(ADMIN_LOCKOUTS_PATH, async (req) => users.lockouts(parsed(PageQuery, req.query, 'query')))

  app.get<One>(ONE, async (req, reply) => {
    const { body, etag } = await users.get(req.params.username)
    return reply.header('etag', etag).send(body)
  })

  app.get<One>(`${ONE}/links`, async (req) => users.links(req.params.username))

  app.put<One>(ONE, async (req, reply) => {
    const username = req.params.username
    const w = await users.put(username, req.body, preconditionsOf(req), callerOf(req))
    if (w.status === 201) reply.header('location', `${ADMIN_USERS_PATH}/${encodeURIComponent(username)}`)
    return reply.code(w.status).header('etag', w.etag).send(w.body)
  })

  app.delete<One>(ONE, async (req, reply) => {
    await users.remove(req.params.username, preconditionsOf(req), callerOf(req))
    return reply.code(204).send()
  })

  for (const action of USER_ACTIONS) {
    app.post<One>(`${ONE}/${action}`, async (req, reply) => {
      const { body, etag } = await users.act(req.params.username, action, preconditionsOf(req), callerOf(req))
      return reply.header('etag', etag).send(body)
    })
  }
}
