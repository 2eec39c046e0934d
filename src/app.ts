// buildApp(deps): the server, the Core every flow shares, and the flows, each registering itself
// (src/core.ts). No module-level state: a test builds as many apps as it likes. To add a flow,
// add its folder under src/flows/ and one line to FLOWS (CONTRIBUTING.md).
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { Config } from './config.js'
import type { CoreServices, Flow } from './core.js'
import type { LocalAdmin } from './admin/local-access.js'
import { createAdmin, createLocalAdmin } from './create-admin.js'
import { boundDatabase, createCore, observe, runInBackground } from './create-core.js'
import type { Db } from './db/db.js'
import { loadMigrations, pendingMigrations } from './db/migrate.js'
import { systemClock, type Clock } from './domain/clock.js'
import { accountFlow } from './flows/account/index.js'
import { authorizationCodeFlow } from './flows/authorization-code/index.js'
import { cibaFlow } from './flows/ciba/index.js'
import type { CibaNotifier } from './flows/ciba/notifier.js'
import type { CibaDeliveryOptions } from './flows/ciba/delivery.js'
import { deviceFlow } from './flows/device/index.js'
import { discoveryFlow } from './flows/discovery/index.js'
import { federationFlow, type UpstreamOptions } from './flows/federation/index.js'
import { introspectionFlow } from './flows/introspection/index.js'
import { landingFlow } from './flows/landing/index.js'
import type { BackchannelLogoutOptions } from './flows/logout/backchannel-logout.js'
import { logoutFlow } from './flows/logout/index.js'
import { registrationFlow } from './flows/registration/index.js'
import { parFlow } from './flows/par/index.js'
import { revocationFlow } from './flows/revocation/index.js'
import { signInFlow } from './flows/sign-in/index.js'
import { secondFactorFlow } from './flows/second-factor/index.js'
import { EXTENSION_GRANTS } from './flows/token/grants/extensions.js'
import { tokenFlow } from './flows/token/index.js'
import { userinfoFlow } from './flows/userinfo/index.js'
import type { GrantFactory } from './grants/registry.js'
import type { MetadataFetchOptions } from './client-auth/metadata-fetch.js'
import { assetRoutes } from './http/assets.js'
import { registerCors } from './http/cors.js'
import { isDraining } from './http/edge.js'
import { healthRoutes } from './http/health.js'
import { createLogger } from './http/logger.js'
import { createServer, registerRequestHandling } from './http/server.js'
import { createLook } from './pages/look.js'

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
  /** CIBA ping and push delivery settings other than the defaults (tests: short timeouts, a fetch). */
  cibaDelivery?: Partial<CibaDeliveryOptions>
  /** Back-channel logout delivery settings other than the defaults (tests: short timeouts, a fetch). */
  backchannelLogout?: Partial<BackchannelLogoutOptions>
  /** Calls to upstream identity providers: settings other than the defaults (tests: a short timeout, a fetch). */
  upstream?: Partial<UpstreamOptions>
  /** Client ID Metadata Document fetches: settings other than the defaults (tests: a short timeout). */
  metadataFetch?: Partial<MetadataFetchOptions>
}

/**
 * Every flow, in the order it registers: discovery merges their members, and lists their grants
 * (grant_types_supported), in this order; the extension grants come after them all.
 */
function flows(deps: AppDeps): Flow[] {
  return [
    discoveryFlow,
    signInFlow,
    accountFlow,
    secondFactorFlow,
    federationFlow({ upstream: deps.upstream }),
    registrationFlow, // before the token endpoint: it watches that route for registered clients' use
    tokenFlow,
    cibaFlow({ notifier: deps.cibaNotifier, delivery: deps.cibaDelivery }),
    deviceFlow,
    authorizationCodeFlow,
    parFlow,
    userinfoFlow,
    logoutFlow({ backchannelLogout: deps.backchannelLogout }),
    introspectionFlow,
    revocationFlow,
    landingFlow,
  ]
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps
  const clock = deps.clock ?? systemClock
  const logger = deps.logger ?? createLogger({ level: config.logLevel, format: config.logFormat })
  const db = boundDatabase(deps.db, config, logger)
  const look = createLook(config)
  const app = await createServer(config, logger, look)
  const { metrics, audit, listenMetrics } = observe(app, db, config, clock, logger)
  await registerRequestHandling(app, look)

  const { core, runtime } = await createCore({ app, config, db, clock, logger, audit, metrics, look, metadataFetch: deps.metadataFetch })
  await registerCors(app, { clients: core.stores.clients }) // before the routes that opt in
  const migrations = await loadMigrations()
  await app.register(healthRoutes, { pendingMigrations: () => pendingMigrations(db, migrations), draining: () => isDraining(app) })
  await app.register(assetRoutes, { look })
  for (const flow of flows(deps)) await flow.register(core)
  for (const make of [...EXTENSION_GRANTS, ...(deps.grants ?? [])]) core.grants.add(make(core.grantDeps()))
  // The admin API: a listener of its own, never routes of this app (src/create-admin.ts).
  const admin = config.adminPort === undefined ? undefined : await createAdmin(core, db)
  if (admin) app.addHook('onClose', async () => admin.close())
  const listenAdmin = async () => {
    if (!admin || config.adminPort === undefined) return undefined
    const address = await admin.listen(config.adminPort, config.adminHost)
    logger.info({ address: address.address, port: address.port }, 'admin API listening')
    return admin
  }
  let localAdmin: LocalAdmin | undefined
  app.addHook('onClose', async () => localAdmin?.close())
  const listenLocalAdmin = async (dataDir: string) => {
    localAdmin ??= await createLocalAdmin(core, db, dataDir)
    logger.info({ address: localAdmin.where }, 'admin API for the local CLI listening')
  }
  app.decorate('authz', {
    clock,
    keys: core.keys,
    interaction: core.interaction,
    audit,
    metrics,
    workers: runtime.workers,
    listenMetrics,
    admin,
    listenAdmin,
    listenLocalAdmin,
  } satisfies CoreServices)
  runInBackground(app, runtime, clock, logger)
  return app
}
