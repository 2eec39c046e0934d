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
import { createLogger, lazyChildLoggerFactory } from './http/logger.js'
import { healthRoutes } from './routes/health.js'
import { discoveryRoutes } from './routes/discovery.js'
import { createDiscoveryService, type DiscoveryService } from './services/discovery.js'
import { createCachedResourceStore } from './stores/cached.js'
import { createPgResourceStore } from './stores/postgres/resources.js'
import { createPgSigningKeyStore } from './stores/postgres/signing-keys.js'
import { createSigningKeyService } from './tokens/key-service.js'
import { createClientCredentialsGrant } from './grants/client-credentials.js'
import { createGrantRegistry, type GrantHandler } from './grants/registry.js'
import { createRefreshTokenGrant } from './grants/refresh-token.js'
import { createClientAuthenticator, createIntrospectionCallerAuthenticator } from './http/client-auth.js'
import { introspectRoutes } from './routes/introspect.js'
import { revocationRoutes } from './routes/revocation.js'
import { tokenRoutes } from './routes/token.js'
import { createIntrospectionService } from './services/introspection.js'
import { createRevocationList } from './services/revocation-list.js'
import { createRevocationService } from './services/revocation.js'
import { createScopeResolver } from './services/scopes.js'
import { createTokenIssuer } from './services/token-issuer.js'
import { createTokenService } from './services/token.js'
import { createCachedClientStore } from './stores/cached.js'
import { createPgClientStore } from './stores/postgres/clients.js'
import { createPgGrantStore } from './stores/postgres/grants.js'
import { createPgRevocationStore } from './stores/postgres/revocations.js'
import { createPgUserStore } from './stores/postgres/users.js'
import type { SigningKeyService } from './tokens/signing-keys.js'
import { createCibaGrant } from './grants/ciba.js'
import { cibaApproveRoutes } from './routes/ciba-approve.js'
import { CIBA_PATH, cibaRoutes } from './routes/ciba.js'
import { CIBA_GRANT, createCibaService } from './services/ciba.js'
import { createCibaApproval } from './services/ciba-approval.js'
import { CIBA_RETENTION_SECONDS, createCleanup } from './services/cleanup.js'
import { createLogNotifier, createWebhookNotifier, type CibaNotifier } from './services/ciba-notifier.js'
import { createClientJwtVerifier, REQUEST_OBJECT_ALGS } from './services/ciba-request-object.js'
import { createPgCibaRequestStore } from './stores/postgres/ciba-requests.js'
import { createPgUsedJtiStore } from './stores/postgres/used-jtis.js'
import { createPgUserSessionStore } from './stores/postgres/user-sessions.js'

export interface AppDeps {
  config: Config
  db: Db
  clock?: Clock
  logger?: Logger
  /** CIBA user notification; default: the webhook when CIBA_NOTIFICATION_URL is set, else the log. */
  cibaNotifier?: CibaNotifier
}

/** Services other parts of the app (and tests, via app.authz) use: pass `keys` into yours. */
export interface CoreServices {
  clock: Clock
  /** Signs and verifies every JWT we issue (no database round trip). */
  keys: SigningKeyService
  /** Call discovery.contribute(() => ({ ... })) to publish what your feature implements. */
  discovery: DiscoveryService
}

declare module 'fastify' {
  interface FastifyInstance {
    authz: CoreServices
  }
}

/** 64 KiB: far above any legitimate OAuth request (Duende caps JWT parameters at 50 KiB). */
export const BODY_LIMIT = 64 * 1024

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, db } = deps
  const clock = deps.clock ?? systemClock
  const logger = deps.logger ?? createLogger({ level: config.logLevel })

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    childLoggerFactory: lazyChildLoggerFactory, // per-request loggers only when something is logged
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

  // Signing keys: created on first start (all replicas share them), then kept in memory.
  const keys = createSigningKeyService({
    config,
    store: createPgSigningKeyStore(db),
    clock,
    onRefreshError: (err) => logger.warn({ err }, 'signing key refresh failed; keeping the loaded keys'),
  })
  await keys.ensureKeys()
  app.addHook('onClose', async () => keys.close())
  const discoveryResources = createCachedResourceStore(createPgResourceStore(db), { ttlSeconds: config.clientCacheTtl, clock })
  const discovery = createDiscoveryService({ config, keys, loadCatalogue: () => discoveryResources.loadCatalogue() })
  const core: CoreServices = { clock, keys, discovery }
  app.decorate('authz', core)

  const migrations = await loadMigrations()
  await app.register(healthRoutes, { pendingMigrations: () => pendingMigrations(db, migrations) })
  await app.register(discoveryRoutes, { discovery: core.discovery })

  // Token core (issue 3): cached client/resource lookups keep the token and introspection hot
  // paths free of database round trips; revocations of JWTs live in an in-memory list per replica.
  const clients = createCachedClientStore(createPgClientStore(db), { ttlSeconds: config.clientCacheTtl, clock })
  const resources = discoveryResources
  const grants = createPgGrantStore(db)
  const revocationStore = createPgRevocationStore(db)
  const revocationList = createRevocationList({ store: revocationStore, db, clock })
  await revocationList.start()
  app.addHook('onClose', async () => revocationList.stop())
  const authenticator = createClientAuthenticator({ clients, clock, realm: config.issuer })
  const scopes = createScopeResolver({ resources })
  const tokenIssuer = createTokenIssuer({ config, clock, keys, grants, users: createPgUserStore(db), resources })
  // One entry per grant_type; extension grants (CIBA…) add their handler to this list.
  const grantHandlers: GrantHandler<any>[] = [
    createClientCredentialsGrant({ scopes, tokens: tokenIssuer }),
    createRefreshTokenGrant({ clock, grants, users: createPgUserStore(db), scopes, tokens: tokenIssuer }),
  ]
  // CIBA (issue 4): OpenID CIBA Core 1.0 poll mode.
  const users = createPgUserStore(db)
  const cibaRequests = createPgCibaRequestStore(db)
  grantHandlers.push(createCibaGrant({ clock, requests: cibaRequests, grants, users, scopes, tokens: tokenIssuer }))
  const cibaNotifier =
    deps.cibaNotifier ??
    (config.cibaNotificationUrl && config.cibaNotificationSecret
      ? createWebhookNotifier({ url: config.cibaNotificationUrl, secret: config.cibaNotificationSecret, clock, logger })
      : createLogNotifier({ logger }))
  // Shutdown waits a little for notifications in flight, never for their retry back-off.
  app.addHook('onClose', async () => {
    await Promise.race([cibaNotifier.drain(), new Promise((r) => setTimeout(r, 2000).unref())])
  })
  const usedJtis = createPgUsedJtiStore(db)
  const ciba = createCibaService({
    config, clock, users, requests: cibaRequests, scopes, keys, notifier: cibaNotifier,
    clientJwts: createClientJwtVerifier({ clock, issuer: config.issuer, usedJtis }),
  })
  await app.register(cibaRoutes, { authenticator, ciba })
  const userSessions = createPgUserSessionStore(db)
  const approval = createCibaApproval({ clock, requests: cibaRequests, sessions: userSessions, users, clients, resources })
  await app.register(cibaApproveRoutes, { approval, secureCookies: config.issuer.startsWith('https:') })
  const cleanup = createCleanup({
    clock,
    logger,
    tasks: [
      { name: 'cibaRequests', remove: cibaRequests.removeExpired, retentionSeconds: CIBA_RETENTION_SECONDS },
      { name: 'persistedGrants', remove: grants.removeExpired },
      { name: 'revokedTokens', remove: revocationStore.removeExpired },
      { name: 'userSessions', remove: userSessions.removeExpired },
      { name: 'usedJtis', remove: usedJtis.removeExpired },
    ],
  })
  cleanup.start()
  app.addHook('onClose', async () => cleanup.stop())
  discovery.contribute(() => ({
    grant_types_supported: [CIBA_GRANT],
    backchannel_authentication_endpoint: `${config.issuer}${CIBA_PATH}`,
    backchannel_token_delivery_modes_supported: ['poll'],
    backchannel_user_code_parameter_supported: true,
    backchannel_authentication_request_signing_alg_values_supported: [...REQUEST_OBJECT_ALGS],
  }))
  const registry = createGrantRegistry(grantHandlers)
  const introspection = createIntrospectionService({ config, clock, keys, grants, revocations: revocationList })
  const revocation = createRevocationService({ config, clock, keys, grants, revocations: revocationStore, list: revocationList })
  await app.register(tokenRoutes, { authenticator, tokens: createTokenService({ registry }) })
  await app.register(introspectRoutes, {
    callers: createIntrospectionCallerAuthenticator({ clients, resources, clock, realm: config.issuer }),
    introspection,
  })
  await app.register(revocationRoutes, { authenticator, revocation })
  discovery.contribute(() => ({
    grant_types_supported: registry.grantTypes(),
    introspection_endpoint: `${config.issuer}/connect/introspect`,
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    introspection_signing_alg_values_supported: [config.accessTokenSigningAlg],
    revocation_endpoint: `${config.issuer}/connect/revocation`,
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
  }))

  return app
}
