// Liveness and readiness for orchestrators and the container HEALTHCHECK.
// live: the process answers. ready: the database answers and every migration is applied.
// Their request lines are logged at debug (src/http/log-controller.ts).
import type { FastifyPluginAsync } from 'fastify'
import { isUnavailable } from '../errors.js'
import { LIVENESS_PATH, READINESS_PATH } from '../endpoints.js'

/** Readiness answers within this long (and so within a second on a busy machine), whatever the database does: a probe must not hang. */
export const READY_TIMEOUT_MS = 700

export interface HealthDeps {
  /** Resolves to the versions not yet applied; rejects when the database does not answer. */
  pendingMigrations(): Promise<string[]>
  /** True once the server drains for shutdown: readiness fails so that a proxy moves its traffic. */
  draining?: () => boolean
}

export const healthRoutes: FastifyPluginAsync<HealthDeps> = async (app, deps) => {
  app.get(LIVENESS_PATH, async (_req, reply) => {
    reply.header('cache-control', 'no-store')
    return { status: 'live' }
  })

  app.get(READINESS_PATH, async (req, reply) => {
    reply.header('cache-control', 'no-store')
    if (deps.draining?.()) {
      reply.code(503)
      return { status: 'not_ready', reason: 'shutting down' }
    }
    try {
      let timer: NodeJS.Timeout | undefined
      const pending = await Promise.race([
        deps.pendingMigrations(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new ReadyTimeout()), READY_TIMEOUT_MS)
        }),
      ]).finally(() => clearTimeout(timer))
      if (pending.length > 0) {
        reply.code(503)
        return { status: 'not_ready', reason: `migrations not applied: ${pending.join(', ')}` }
      }
      return { status: 'ready' }
    } catch (err) {
      // An outage is logged once where it is noticed; a probe every few seconds adds nothing.
      if (!(err instanceof ReadyTimeout) && !isUnavailable(err)) req.log.warn({ err }, 'readiness check failed')
      reply.code(503)
      return { status: 'not_ready', reason: 'database unavailable' }
    }
  })
}

class ReadyTimeout extends Error {}
