// GET /admin/keys, POST /admin/keys/rotate; GET /admin/migrations; GET and DELETE /admin/users/{username}/consents[/{clientId}].
import type { FastifyInstance } from 'fastify'
import { ADMIN_KEYS_PATH, ADMIN_MIGRATIONS_PATH, ADMIN_USERS_PATH } from '../endpoints.js'
import type { AdminDeps } from './deps.js'
import { createConsentAdmin, createKeyAdmin, RotateKeys } from './keys-consents.js'
import { PageQuery } from './paging.js'
import { callerOf, parsed } from './request.js'

const CONSENTS = `${ADMIN_USERS_PATH}/:username/consents`
type User = { Params: { username: string } }
type UserClient = { Params: { username: string; clientId: string } }

export async function keyAndConsentRoutes(app: FastifyInstance, opts: { deps: AdminDeps }) {
  const keys = createKeyAdmin(opts.deps)
  const consents = createConsentAdmin(opts.deps)

  app.get(ADMIN_KEYS_PATH, async () => keys.list())
  app.post(`${ADMIN_KEYS_PATH}/rotate`, async (req, reply) => {
    const { alg } = parsed(RotateKeys, req.body ?? {}, 'request body')
    return reply.code(201).send(await keys.rotate(alg, callerOf(req)))
  })

  // What a CLI of another version compares with its migration files (src/cli/migrate.ts).
  app.get(ADMIN_MIGRATIONS_PATH, async () => ({ items: await opts.deps.appliedMigrations() }))

  app.get<User>(CONSENTS, async (req) => consents.list(req.params.username, parsed(PageQuery, req.query, 'query')))
  app.delete<User>(CONSENTS, async (req) => ({ revoked: await consents.revoke(req.params.username, undefined, callerOf(req)) }))
  app.delete<UserClient>(`${CONSENTS}/:clientId`, async (req, reply) => {
    await consents.revoke(req.params.username, req.params.clientId, callerOf(req))
    return reply.code(204).send()
  })
}
