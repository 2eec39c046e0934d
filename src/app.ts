// buildApp(deps): the server, the Core every flow shares, and the flows, each registering itself
// (src/core.ts). No module-level state: a test builds as many apps as it likes. To add a flow,
// add its folder under src/flows/ and one line to FLOWS (CONTRIBUTING.md).
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { Config } from './config.js'
import type { BackgroundWorker, Core, Flow } from './core.js'
import { createCore } from './create-core.js'
import { createBoundedDb } from './db/bounded.js'
import type { Db } from './db/db.js'
import { loadMigrations, pendingMigrations } from './db/migrate.js'
import { systemClock, type Clock } from './domain/clock.js'
import { authorizationCodeFlow } from './flows/authorization-code/index.js'
import { cibaFlow } from './flows/ciba/index.js'
import type { CibaNotifier } from './flows/ciba/notifier.js'
import { deviceFlow } from './flows/device/index.js'
import { discoveryFlow } from './flows/discovery/index.js'
import { introspectionFlow } from './flows/introspection/index.js'
import type { BackchannelLogoutOptions } from './flows/logout/backchannel-logout.js'
import { logoutFlow } from './flows/logout/index.js'
import { revocationFlow } from './flows/revocation/index.js'
import { signInFlow } from './flows/sign-in/index.js'
import { EXTENSION_GRANTS } from './flows/token/grants/extensions.js'
import { tokenFlow } from './flows/token/index.js'
import { userinfoFlow } from './flows/userinfo/index.js'
import type { GrantFactory } from './grants/registry.js'
import { assetRoutes } from './http/assets.js'
import { registerCors } from './http/cors.js'
import { isDraining } from './http/edge.js'
import { healthRoutes } from './http/health.js'
import { createLogger } from './http/logger.js'
import { observeRequests } from './http/request-metrics.js'
import { createServer, registerRequestHandling } from './http/server.js'
import { CIBA_RETENTION_SECONDS, createCleanup } from './jobs/cleanup.js'
import type { SigningKeyService } from './keys/signing-keys.js'
import { createAuditLog, type AuditSink } from './observe/audit.js'
import { createMetrics, type Metrics } from './observe/metrics.js'
import type { MetricsListener } from './observe/metrics-server.js'
import { createPgExpiredRowCounter } from './stores/expired-rows.postgres.js'

export { BODY_LIMIT } from './http/server.js'

export interface AppDeps {
  config: Config
  db: Db
  clock?: Clock
  logger?: Logger
  /** CIBA user notification; default: the webhook when CIBA_NOTIFICATION_URL is set, else the log. */
  cibaNotifier?: CibaNotifier
  /** Extension grants besides the built-in ones (docs/extending.md "Adding a grant type"). */
  grants?: GrantFactory[]
  /** Back-channel logout delivery settings other than the defaults (tests: short timeouts, a fetch). */
  backchannelLogout?: Partial<BackchannelLogoutOptions>
}

/**
 * Every flow, in the order it registers: discovery merges their members, and lists their grants
 * (grant_types_supported), in this order; the extension grants come after them all.
 */
function flows(deps: AppDeps): Flow[] {
  return [
    discoveryFlow,
    signInFlow,
    tokenFlow,
    cibaFlow({ notifier: deps.cibaNotifier }),
    deviceFlow,
    authorizationCodeFlow,
    userinfoFlow,
    logoutFlow({ backchannelLogout: deps.backchannelLogout }),
    introspectionFlow,
    revocationFlow,
  ]
}

/** What other parts of the app (main.ts, tests, embedders) reach through app.authz. */
export interface CoreServices extends Pick<Core, 'clock' | 'keys' | 'interaction' | 'audit' | 'metrics'> {
  keys: SigningKeyService
  audit: AuditSink
  metrics: Metrics | undefined
  /** Starts the metrics listener on METRICS_HOST:METRICS_PORT (nothing when unset); closed with the app. */
  listenMetrics(): Promise<MetricsListener | undefined>
  /** The background workers the flows registered, by name (e.g. 'backchannel-logout'). */
  workers: ReadonlyMap<string, BackgroundWorker>
}

declare module 'fastify' {
  interface FastifyInstance {
    authz: CoreServices
  }
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps
  const clock = deps.clock ?? systemClock
  const logger = deps.logger ?? createLogger({ level: config.logLevel })
  const db = boundDatabase(deps.db, config, logger)
  const app = await createServer(config, logger)
  const metrics = config.metricsPort === undefined ? undefined : createMetrics()
  const audit = createAuditLog({ logger, listeners: metrics ? [metrics.audit] : [] })
  const expired = createPgExpiredRowCounter(db, { ciba_requests: CIBA_RETENTION_SECONDS, device_authorizations: CIBA_RETENTION_SECONDS })
  const poolStats = db.poolStats?.bind(db)
  const metricsListener = metrics && observeRequests(app, metrics, { ...(poolStats ? { pool: poolStats } : {}), expiredRows: () => expired.count(clock.now()) }, logger)
  await registerRequestHandling(app)

  const { core, runtime } = await createCore({ app, config, db, clock, logger, audit, metrics })
  await registerCors(app, { clients: core.stores.clients }) // before the routes that opt in
  const migrations = await loadMigrations()
  await app.register(healthRoutes, { pendingMigrations: () => pendingMigrations(db, migrations), draining: () => isDraining(app) })
  await app.register(assetRoutes)
  for (const flow of flows(deps)) await flow.register(core)
  for (const make of [...EXTENSION_GRANTS, ...(deps.grants ?? [])]) core.grants.add(make(core.grantDeps()))
  app.decorate('authz', {
    clock, keys: core.keys, interaction: core.interaction, audit, metrics, workers: runtime.workers,
    async listenMetrics() {
      if (!metricsListener || config.metricsPort === undefined) return undefined
      const address = await metricsListener.listen(config.metricsPort, config.metricsHost)
      logger.info({ address: address.address, port: address.port }, 'metrics listening')
      return metricsListener
    },
  } satisfies CoreServices)

  // Expired state, removed in the background in small batches (src/jobs/cleanup.ts).
  const { stores } = core
  const cleanup = createCleanup({
    clock,
    logger,
    tasks: [
      ...runtime.cleanupTasks,
      { name: 'persistedGrants', remove: stores.grants.removeExpired },
      { name: 'grantFamilies', remove: stores.grants.removeExpiredFamilies },
      { name: 'revokedTokens', remove: stores.revocations.removeExpired },
      { name: 'userSessions', remove: stores.userSessions.removeExpired },
      { name: 'failureCounters', remove: stores.failures.removeExpired },
    ],
  })
  cleanup.start()
  app.addHook('onClose', async () => cleanup.stop())
  // Workers start once the app is ready; on close an attempt in flight is handed back, not waited for.
  app.addHook('onReady', async () => runtime.workers.forEach((w) => w.start()))
  app.addHook('onClose', async () => {
    await Promise.all([...runtime.workers.values()].map((w) => w.stop()))
  })
  return app
}

/**
 * Every database wait of the app bounded (src/db/bounded.ts); an outage logged when it begins and
 * when it ends, its failed requests counted (503 temporarily_unavailable), never traced one by one.
 */
function boundDatabase(db: Db, config: Config, logger: Logger) {
  return createBoundedDb(db, {
    queryTimeoutSeconds: config.databaseQueryTimeout,
    connectTimeoutSeconds: config.databaseConnectTimeout,
    events: {
      down: (err) => logger.error({ err }, 'database unavailable: answering 503 until it answers again; failures are counted, not logged'),
      up: ({ failures, seconds }) => logger.warn({ failures, seconds }, 'database available again'),
    },
  })
}
