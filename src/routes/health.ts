// Liveness and readiness for orchestrators and the container HEALTHCHECK.
// live: the process answers. ready: the database answers and every migration is applied.
import type { FastifyPluginAsync } from 'fastify'

export interface HealthDeps {
  /** Resolves to the versions not yet applied; rejects when the database does not answer. */
  pendingMigrations(): Promise<string[]>
}

// Probes arrive every few seconds from every orchestrator: their request lines are logged at debug,
// so that LOG_LEVEL=info shows traffic, not heartbeats. A failed readiness check still warns.
const PROBE = { logLevel: 'debug' } as const

export const healthRoutes: FastifyPluginAsync<HealthDeps> = async (app, deps) => {
  app.get('/health/live', PROBE, async (_req, reply) => {
    reply.header('cache-control', 'no-store')
    return { status: 'live' }
  })

  app.get('/health/ready', PROBE, async (req, reply) => {
    reply.header('cache-control', 'no-store')
    try {
      const pending = await deps.pendingMigrations()
      if (pending.length > 0) {
        reply.code(503)
        return { status: 'not_ready', reason: `migrations not applied: ${pending.join(', ')}` }
      }
      return { status: 'ready' }
    } catch (err) {
      req.log.warn({ err }, 'readiness check failed')
      reply.code(503)
      return { status: 'not_ready', reason: 'database unavailable' }
    }
  })
}
