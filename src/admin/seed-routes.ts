// PUT /admin/seed: a whole seed document in one transaction (src/admin/seed.ts). Answers how many
// entries of each kind it held and the seed's warnings.
import type { FastifyInstance } from 'fastify'
import { ADMIN_SEED_PATH } from '../endpoints.js'
import type { AdminDeps } from './deps.js'
import { callerOf } from './request.js'
import { createSeedAdmin } from './seed.js'

export async function seedRoutes(app: FastifyInstance, opts: { deps: AdminDeps }) {
  const seed = createSeedAdmin(opts.deps)
  app.put(ADMIN_SEED_PATH, async (req) => {
    const { counts, warnings } = await seed.apply(req.body, callerOf(req))
    return { ...counts, warnings }
  })
}
