// buildApp(deps): Fastify, form parser, error handler, routes, and the wiring of stores into
// services. No module-level state: a test builds as many apps as it likes.
import { randomUUID } from 'node:crypto'
import formbody from '@fastify/formbody'
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { Config } from './config.js'
import { loadMigrations, pendingMigrations } from './db/migrate.js'
import type { Db } from './db/db.js'
import { systemClock, type Clock } from './domain/clock.js'
import { OAuthError } from './errors.js'
import { errorHandler, sendError } from './http/error-handler.js'
import { safeName } from './http/form.js'
import { createLogger } from './http/logger.js'
import { healthRoutes } from './routes/health.js'

export interface AppDeps {
  config: Config
  db: Db
  clock?: Clock
  logger?: Logger
}

/** 64 KiB: far above any legitimate OAuth request (Duende caps JWT parameters at 50 KiB). */
export const BODY_LIMIT = 64 * 1024

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, db } = deps
  const clock = deps.clock ?? systemClock
  const logger = deps.logger ?? createLogger({ level: config.logLevel })
  void clock

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    trustProxy: config.trustProxy,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true },
  })
  app.setErrorHandler(errorHandler)
  app.setNotFoundHandler((req, reply) =>
    reply.send(sendError(reply, new OAuthError('not_found', `no route for ${req.method} ${safeName(req.url.split('?')[0] ?? '')}`))),
  )
  app.addHook('onSend', async (req, reply) => {
    reply.header('x-request-id', req.id)
  })
  await app.register(formbody, { bodyLimit: BODY_LIMIT })

  const migrations = await loadMigrations()
  await app.register(healthRoutes, { pendingMigrations: () => pendingMigrations(db, migrations) })

  return app
}
