// buildApp(deps): Fastify, form parser, error handler, routes, and the wiring of stores into
// services. No module-level state: a test builds as many apps as it likes.
import formbody from '@fastify/formbody'
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { Config } from './config.js'
import { createBoundedDb } from './db/bounded.js'
import type { Db } from './db/db.js'
import { loadMigrations, pendingMigrations } from './db/migrate.js'
import { systemClock, type Clock } from './domain/clock.js'
import { isUnavailable, OAuthError } from './errors.js'
import { createAuthorizationCodeGrant } from './flows/authorization-code/grant.js'
import { createCibaGrant } from './flows/ciba/grant.js'
import { createDeviceCodeGrant } from './flows/device/grant.js'
import { createPolling, type Polling } from './grants/polling.js'
import { createClientCredentialsGrant } from './flows/token/grants/client-credentials.js'
import { EXTENSION_GRANTS } from './flows/token/grants/extensions.js'
import { createPasswordGrant } from './flows/token/grants/password.js'
import { createRefreshTokenGrant } from './flows/token/grants/refresh-token.js'
import { createOneTimeUse, type OneTimeUse } from './grants/one-time-use.js'
import { createGrantRegistry, type GrantDeps, type GrantFactory, type GrantHandler } from './grants/registry.js'
import { createClientAuthenticator, createIntrospectionCallerAuthenticator } from './client-auth/authenticators.js'
import { registerCors } from './http/cors.js'
import { clientErrorHandler, installEdgeChecks, isDraining } from './http/edge.js'
import { createErrorHandler, registerErrorHandling, sendError } from './http/error-handler.js'
import { createPageKit, registerCookies, registerPageHeaders, type PageKit } from './http/page-kit.js'
import { apiRateLimit, pageRateLimit, registerRateLimit } from './http/rate-limit.js'
import { createLogger, lazyChildLoggerFactory } from './http/logger.js'
import { requestIdOf } from './http/request-id.js'
import { ProbesAtDebug } from './http/log-controller.js'
import { createAuditLog, type AuditSink } from './observe/audit.js'
import { createMetrics, type Metrics } from './observe/metrics.js'
import { createMetricsListener, type MetricsListener } from './observe/metrics-server.js'
import { createConsentService } from './interaction/consent.js'
import { createCsrfTokens } from './interaction/csrf.js'
import { createReturnTargets, type ReturnTargets } from './interaction/return-to.js'
import { createSessionService, type SessionService } from './interaction/session.js'
import { createSignInService } from './interaction/sign-in.js'
import { ACCOUNT_PATH } from './pages/sign-in.js'
import { APPROVE_PATH } from './flows/ciba/pages.js'
import { DEVICE_PATH } from './flows/device/pages.js'
import { accountRoutes } from './flows/sign-in/routes.js'
import { authorizeRoutes } from './flows/authorization-code/routes.js'
import { endSessionRoutes } from './flows/logout/routes.js'
import { assetRoutes } from './http/assets.js'
import { cibaApproveRoutes } from './flows/ciba/approval-routes.js'
import { CIBA_PATH, cibaRoutes } from './flows/ciba/routes.js'
import { DEVICE_AUTHORIZATION_PATH, deviceAuthorizationRoutes } from './flows/device/authorization-routes.js'
import { deviceRoutes } from './flows/device/verification-routes.js'
import { discoveryRoutes } from './flows/discovery/routes.js'
import { healthRoutes } from './flows/health/routes.js'
import { introspectRoutes } from './flows/introspection/routes.js'
import { revocationRoutes } from './flows/revocation/routes.js'
import { tokenRoutes } from './flows/token/routes.js'
import { USERINFO_PATH, userinfoRoutes } from './flows/userinfo/routes.js'
import { AUTHORIZE_PATH, createAuthorizeService } from './flows/authorization-code/service.js'
import { createBackchannelLogoutWorker, type BackchannelLogoutOptions, type BackchannelLogoutWorker } from './flows/logout/backchannel-logout.js'
import { createCibaApproval } from './flows/ciba/approval.js'
import { createEndSessionService, END_SESSION_PATH } from './flows/logout/service.js'
import { createLogNotifier, createWebhookNotifier, type CibaNotifier } from './flows/ciba/notifier.js'
import { createClientJwtVerifier, REQUEST_OBJECT_ALGS } from './flows/ciba/request-object.js'
import { createCibaService } from './flows/ciba/service.js'
import { clientAuthPolicy, createClientAuthThrottle } from './client-auth/throttle.js'
import { CIBA_RETENTION_SECONDS, createCleanup } from './jobs/cleanup.js'
import { createDeviceAuthorization } from './flows/device/authorization.js'
import { createDeviceVerification } from './flows/device/verification.js'
import { createDiscoveryService, type DiscoveryService } from './flows/discovery/service.js'
import { createIntrospectionService } from './flows/introspection/service.js'
import { createPasswordCheck, lockoutPolicy, type PasswordCheck } from './interaction/password-check.js'
import { createRevocationList } from './tokens/revocation-list.js'
import { createRevocationService } from './flows/revocation/service.js'
import { createScopeResolver } from './grants/scopes.js'
import { createTokenIssuer } from './tokens/issuer.js'
import { createTokenReader, type TokenReader } from './tokens/token-reader.js'
import { createTokenService } from './flows/token/service.js'
import { createUserinfoService } from './flows/userinfo/service.js'
import { createDeviceUserCodeThrottle, createUserCodeCheck, userCodePolicy } from './interaction/user-code-check.js'
import { createCachedClientStore, createCachedResourceStore, createCachedUserStore } from './stores/cached.js'
import { createPgBackchannelLogoutStore } from './stores/backchannel-logouts.postgres.js'
import { createPgCibaRequestStore } from './stores/ciba-requests.postgres.js'
import { createPgClientStore } from './stores/clients.postgres.js'
import { createPgFailureCounterStore } from './stores/failure-counters.postgres.js'
import { createPgConsentStore } from './stores/consents.postgres.js'
import { createPgDeviceAuthorizationStore } from './stores/device-authorizations.postgres.js'
import { createPgExpiredRowCounter } from './stores/expired-rows.postgres.js'
import { createPgGrantStore } from './stores/grants.postgres.js'
import { createPgResourceStore } from './stores/resources.postgres.js'
import { createPgRevocationStore } from './stores/revocations.postgres.js'
import { createPgSigningKeyStore } from './stores/signing-keys.postgres.js'
import { createPgServerSecretStore } from './stores/server-secrets.postgres.js'
import { createPgUsedJtiStore } from './stores/used-jtis.postgres.js'
import { createPgUserSessionStore } from './stores/user-sessions.postgres.js'
import { createPgUserStore } from './stores/users.postgres.js'
import { createSigningKeyService } from './keys/key-service.js'
import { loadServerSecret } from './keys/server-secrets.js'
import type { SigningKeyService } from './keys/signing-keys.js'

export interface AppDeps {
  config: Config
  db: Db
  clock?: Clock
  logger?: Logger
  /** CIBA user notification; default: the webhook when CIBA_NOTIFICATION_URL is set, else the log. */
  cibaNotifier?: CibaNotifier
  /** Extension grants besides the built-in ones (src/flows/token/grants/extensions.ts); README "Adding a grant type". */
  grants?: GrantFactory[]
  /** Back-channel logout delivery settings other than the defaults (tests: short timeouts, a fetch). */
  backchannelLogout?: Partial<BackchannelLogoutOptions>
}

/** Services other parts of the app (and tests, via app.authz) use: pass `keys` into yours. */
export interface CoreServices {
  clock: Clock
  /** Signs and verifies every JWT we issue (no database round trip). */
  keys: SigningKeyService
  /** Call discovery.contribute(() => ({ ... })) to publish what your feature implements. */
  discovery: DiscoveryService
  /** The person's side every interactive flow builds on (README "Adding an interactive flow"). */
  interaction: Interaction
  /** Audit events (README "Audit events"): `audit.emit({ event: 'token.issued', clientId, ... })`. */
  audit: AuditSink
  /** Undefined unless METRICS_PORT is set. */
  metrics: Metrics | undefined
  /** Starts the metrics listener on METRICS_HOST:METRICS_PORT (nothing when unset); closed with the app. */
  listenMetrics(): Promise<MetricsListener | undefined>
  /** Sends queued back-channel logouts (OpenID Connect Back-Channel Logout 1.0); runOnce() sends what is due now. */
  backchannelLogout: BackchannelLogoutWorker
}

declare module 'fastify' {
  interface FastifyInstance {
    authz: CoreServices
  }
}

const OLD_VERSIONS_KEPT =
  'a transaction older than the replacement was still open: old row versions holding the plaintext may remain in this table until VACUUM FULL runs on it again'

/** What loadServerSecret tells when it replaced a secret stored in plaintext (src/keys/server-secrets.ts). */
const secretReplaced = (log: { warn(obj: object, msg: string): void }) => (name: string, purged: boolean) => {
  log.warn({ name, purged }, 'server secret stored in plaintext replaced by a new one encrypted with KEY_ENCRYPTION_SECRET')
  if (!purged) log.warn({ table: 'server_secrets' }, OLD_VERSIONS_KEPT)
}

/** 64 KiB: far above any legitimate OAuth request (Duende caps JWT parameters at 50 KiB). */
export const BODY_LIMIT = 64 * 1024

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps
  const clock = deps.clock ?? systemClock
  const logger = deps.logger ?? createLogger({ level: config.logLevel })
  const db = boundDatabase(deps.db, config, logger)

  const errorOpts = { issuer: config.issuer, site: new URL(config.issuer).host }
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    childLoggerFactory: lazyChildLoggerFactory, // per-request loggers only when something is logged
    bodyLimit: BODY_LIMIT,
    trustProxy: config.trustProxy,
    requestIdHeader: false, // genReqId reads X-Request-Id itself, and keeps it only when plain
    genReqId: requestIdOf,
    logController: new ProbesAtDebug(), // health probes' request lines at debug, not info
    // The edge (src/http/edge.ts) answers in OAuth shape what Node and Fastify would answer themselves.
    return503OnClosing: false,
    clientErrorHandler,
    frameworkErrors: createErrorHandler(errorOpts),
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true },
    ...serverTimeouts(config),
  })
  // Beyond this many open connections the listener refuses more (Node drops them at accept), so
  // that held sockets cannot exhaust the process's file descriptors; 0: no cap.
  if (config.httpMaxConnections > 0) app.server.maxConnections = config.httpMaxConnections
  registerErrorHandling(app, errorOpts)
  installEdgeChecks(app)
  app.setNotFoundHandler((_req, reply) => reply.send(sendError(reply, new OAuthError('not_found', 'no endpoint at this path for this method'))))
  app.addHook('onSend', async (req, reply) => {
    reply.header('x-request-id', req.id)
  })
  const metrics = config.metricsPort === undefined ? undefined : createMetrics()
  const audit = createAuditLog({ logger, listeners: metrics ? [metrics.audit] : [] })
  const metricsListener = metrics && observeRequests(app, metrics, db, logger, clock)
  await app.register(formbody, { bodyLimit: BODY_LIMIT })
  await registerRateLimit(app)
  await registerCookies(app)
  registerPageHeaders(app)

  // Signing keys: created on first start (all replicas share them), then kept in memory.
  const keys = createSigningKeyService({
    config,
    store: createPgSigningKeyStore(db),
    clock,
    onRefreshError: (err) => {
      if (!isUnavailable(err)) logger.warn({ err }, 'signing key refresh failed; keeping the loaded keys')
    },
    audit,
  })
  const keyChanges = await keys.ensureKeys()
  if (keyChanges.replaced.length > 0) {
    const replaced = keyChanges.replaced.map((r) => ({ ...r, signsUntil: new Date(r.signsUntil).toISOString() }))
    logger.warn({ replaced }, 'signing keys stored in plaintext are replaced by new keys encrypted with KEY_ENCRYPTION_SECRET; copies of the data made before still hold the old keys')
  }
  if (keyChanges.purged === false) logger.warn({ table: 'signing_keys' }, OLD_VERSIONS_KEPT)
  if (keyChanges.erased.length > 0) logger.info({ kids: keyChanges.erased }, 'private parts of superseded signing keys erased: they only verify until retired')
  if (keyChanges.removed.length > 0) logger.info({ kids: keyChanges.removed }, 'retired signing keys removed: nothing they signed is valid any more')
  app.addHook('onClose', async () => keys.close())
  const stores = createStores(db, config, clock)
  await registerCors(app, { clients: stores.clients }) // before the routes that opt in
  const discovery = createDiscoveryService({ config, keys, loadCatalogue: () => stores.resources.loadCatalogue() })

  const migrations = await loadMigrations()
  await app.register(healthRoutes, { pendingMigrations: () => pendingMigrations(db, migrations), draining: () => isDraining(app) })
  await app.register(discoveryRoutes, { discovery })

  const revocationList = createRevocationList({ store: stores.revocations, clock })
  await revocationList.start()
  app.addHook('onClose', async () => revocationList.stop())
  const throttle = createClientAuthThrottle({
    failures: stores.failures, clock, logger, policy: clientAuthPolicy(config), staleSeconds: config.clientCacheTtl, audit,
  })
  const passwordCheck = createPasswordCheck({ users: stores.users, failures: stores.failures, clock, logger, policy: lockoutPolicy(config), audit })
  const once = createOneTimeUse({ clock, grants: stores.grants, revokedJwts: revocationList, audit })
  const ctx: Wiring = {
    app, config, clock, keys, discovery, stores, revocationList, throttle, passwordCheck, audit, metrics,
    authenticator: createClientAuthenticator({ clients: stores.clients, clock, realm: config.issuer, throttle }),
    scopes: createScopeResolver({ resources: stores.resources }),
    tokens: createTokenIssuer({ config, clock, keys, grants: stores.grants, users: stores.users, resources: stores.resources }),
    consent: createConsentService({ clock, consents: stores.consents }),
    tokenReader: createTokenReader({ config, clock, keys, grants: stores.grants, revocations: revocationList, clients: stores.clients, users: stores.users }),
    interaction: await registerInteraction({ app, db, config, clock, stores, passwordCheck }),
    once,
    polling: createPolling({ clock, once }),
  }
  const backchannelLogout = createBackchannelLogoutWorker({
    issuer: config.issuer, clock, store: stores.backchannelLogouts, clients: stores.clients, keys, logger, audit,
    ...(deps.backchannelLogout ? { options: deps.backchannelLogout } : {}),
  })
  app.decorate('authz', {
    clock, keys, discovery, interaction: ctx.interaction, audit, metrics, backchannelLogout,
    async listenMetrics() {
      if (!metricsListener || config.metricsPort === undefined) return undefined
      const address = await metricsListener.listen(config.metricsPort, config.metricsHost)
      logger.info({ address: address.address, port: address.port }, 'metrics listening')
      return metricsListener
    },
  } satisfies CoreServices)
  const cibaGrant = await registerCiba(ctx, deps.cibaNotifier ?? defaultNotifier(config, clock, logger))
  const deviceGrant = await registerDevice(ctx)
  const codeGrant = await registerAuthorizationCode(ctx, db)
  await registerTokenCore(ctx, [cibaGrant, deviceGrant, codeGrant], [...EXTENSION_GRANTS, ...(deps.grants ?? [])])
  startCleanup(ctx, logger)
  // Started once the app is ready; on close an attempt in flight is handed back, not waited for.
  app.addHook('onReady', async () => backchannelLogout.start())
  app.addHook('onClose', async () => backchannelLogout.stop())
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

/**
 * Bounds on every connection (Node's http.Server): the head within HTTP_HEADERS_TIMEOUT, the
 * whole request within HTTP_REQUEST_TIMEOUT (Node answers 408, in OAuth shape by the edge), an
 * idle keep-alive connection closed after HTTP_KEEP_ALIVE_TIMEOUT. Node checks the first two
 * every connectionsCheckingInterval, so that is kept well below them.
 */
function serverTimeouts(config: Config) {
  const ms = (s: number) => Math.round(s * 1000)
  return {
    requestTimeout: ms(config.httpRequestTimeout),
    keepAliveTimeout: ms(config.httpKeepAliveTimeout),
    http: {
      headersTimeout: ms(config.httpHeadersTimeout),
      connectionsCheckingInterval: Math.max(50, Math.min(1000, ms(config.httpHeadersTimeout) / 4)),
    },
  }
}

/** Every store, once: cached where the hot path reads configuration (CLIENT_CACHE_TTL). */
function createStores(db: Db, config: Config, clock: Clock) {
  const cache = { ttlSeconds: config.clientCacheTtl, maxStaleSeconds: config.clientCacheMaxStale, clock }
  return {
    clients: createCachedClientStore(createPgClientStore(db), cache),
    resources: createCachedResourceStore(createPgResourceStore(db), cache),
    users: createCachedUserStore(createPgUserStore(db), cache),
    grants: createPgGrantStore(db),
    revocations: createPgRevocationStore(db),
    cibaRequests: createPgCibaRequestStore(db),
    userSessions: createPgUserSessionStore(db),
    usedJtis: createPgUsedJtiStore(db),
    failures: createPgFailureCounterStore(db),
    consents: createPgConsentStore(db),
    devices: createPgDeviceAuthorizationStore(db),
    backchannelLogouts: createPgBackchannelLogoutStore(db),
  }
}

interface Wiring {
  app: FastifyInstance
  config: Config
  clock: Clock
  keys: SigningKeyService
  discovery: DiscoveryService
  stores: ReturnType<typeof createStores>
  revocationList: ReturnType<typeof createRevocationList>
  authenticator: ReturnType<typeof createClientAuthenticator>
  throttle: ReturnType<typeof createClientAuthThrottle>
  /** Every password check (sign-in pages, password grant) goes through this one: lockout and failure logs. */
  passwordCheck: PasswordCheck
  scopes: ReturnType<typeof createScopeResolver>
  tokens: ReturnType<typeof createTokenIssuer>
  /** Remembered consent, for every flow in which a person decides (authorize, device, CIBA). */
  consent: ReturnType<typeof createConsentService>
  /** What a presented token of ours is (introspection, token exchange); one verified-JWT cache. */
  tokenReader: TokenReader
  /** The person's side: session, sign-in, page kit (README "Adding an interactive flow"). */
  interaction: Interaction
  /** Use once, revoke the family: every grant that redeems a one-time artefact goes through it. */
  once: OneTimeUse
  /** The polling rules every polled grant (CIBA, device_code) shares. */
  polling: Polling
  /** Audit events: every security-relevant outcome (src/observe/audit.ts). */
  audit: AuditSink
  metrics: Metrics | undefined
}

/** What every interactive flow builds on. */
export interface Interaction {
  /** Cookies, CSRF and Origin checks, page sending, the way to sign-in (src/http/page-kit.ts). */
  pages: PageKit
  /** Register the flow's page here so the sign-in page may return to it and name its client. */
  returnTargets: ReturnTargets
  sessions: SessionService
}

/**
 * The one session, sign-in page and CSRF mechanism. The CSRF key is a server secret
 * created once in the database, so every replica accepts the forms of every other.
 */
async function registerInteraction(w: Pick<Wiring, 'app' | 'config' | 'clock' | 'stores' | 'passwordCheck'> & { db: Db }): Promise<Interaction> {
  const { app, db, config, clock, stores } = w
  const secret = await loadServerSecret(
    {
      store: createPgServerSecretStore(db),
      clock,
      keyEncryptionSecret: config.keyEncryptionSecret,
      onReplaced: secretReplaced(app.log),
    },
    'csrf',
  )
  const sessions = createSessionService({ clock, store: stores.userSessions, idleSeconds: config.sessionIdleTimeout, lifetimeSeconds: config.sessionLifetime })
  const pages = createPageKit(app, { issuer: config.issuer, sessionLifetime: config.sessionLifetime, sessions, csrf: createCsrfTokens(secret) })
  const returnTargets = createReturnTargets()
  returnTargets.allow({ path: ACCOUNT_PATH, describe: async () => ({}) })
  const signIn = createSignInService({ passwordCheck: w.passwordCheck, sessions, targets: returnTargets, accountPath: ACCOUNT_PATH })
  await app.register(assetRoutes)
  await app.register(accountRoutes, { pages, signIn, signInRateLimit: pageRateLimit(config.rateLimitSignIn) })
  return { pages, returnTargets, sessions }
}

/**
 * Token, introspection and revocation endpoints. One grant handler per grant_type:
 * the core ones here, other features' in `featureGrants`, extension grants (RFC 6749 §4.5) as
 * factories given the same services (GrantDeps).
 */
async function registerTokenCore(w: Wiring, featureGrants: GrantHandler<any>[], extensions: readonly GrantFactory[]) {
  const { app, config, clock, keys, stores } = w
  const grantDeps: GrantDeps = { config, clock, scopes: w.scopes, tokens: w.tokens, users: stores.users, tokenReader: w.tokenReader, once: w.once, audit: w.audit }
  const registry = createGrantRegistry([
    createClientCredentialsGrant({ scopes: w.scopes, tokens: w.tokens }),
    createRefreshTokenGrant({ clock, publicClientRefreshTokenLifetime: config.publicClientRefreshTokenLifetime, grants: stores.grants, once: w.once, users: stores.users, scopes: w.scopes, tokens: w.tokens, audit: w.audit }),
    createPasswordGrant({ clock, passwords: w.passwordCheck, scopes: w.scopes, tokens: w.tokens }),
    ...featureGrants,
    ...extensions.map((make) => make(grantDeps)),
  ])
  const rateLimit = apiRateLimit(config.rateLimitApi)
  await app.register(tokenRoutes, { authenticator: w.authenticator, tokens: createTokenService({ registry, audit: w.audit }), rateLimit })
  await app.register(introspectRoutes, {
    rateLimit,
    ...(w.metrics ? { countResult: w.metrics.introspection } : {}),
    callers: createIntrospectionCallerAuthenticator({ clients: stores.clients, resources: stores.resources, clock, realm: config.issuer, throttle: w.throttle }),
    introspection: createIntrospectionService({
      config, clock, keys, grants: stores.grants, revocations: w.revocationList, clients: stores.clients, users: stores.users, reader: w.tokenReader,
    }),
  })
  await app.register(revocationRoutes, {
    authenticator: w.authenticator,
    rateLimit,
    revocation: createRevocationService({ config, clock, keys, grants: stores.grants, once: w.once, revocations: stores.revocations, list: w.revocationList, audit: w.audit }),
  })
  w.discovery.contribute(() => ({
    grant_types_supported: registry.grantTypes(),
    introspection_endpoint: `${config.issuer}/connect/introspect`,
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    introspection_signing_alg_values_supported: [config.accessTokenSigningAlg],
    revocation_endpoint: `${config.issuer}/connect/revocation`,
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
  }))
}

/** CIBA: OpenID CIBA Core 1.0 poll mode. Returns its token-endpoint grant. */
async function registerCiba(w: Wiring, notifier: CibaNotifier): Promise<GrantHandler<any>> {
  const { app, config, clock, stores } = w
  // Shutdown waits a little for notifications in flight, never for their retry back-off.
  app.addHook('onClose', async () => {
    await Promise.race([notifier.drain(), new Promise((r) => setTimeout(r, 2000).unref())])
  })
  const ciba = createCibaService({
    config, clock, users: stores.users, requests: stores.cibaRequests, scopes: w.scopes, keys: w.keys, notifier, audit: w.audit,
    clientJwts: createClientJwtVerifier({ clock, issuer: config.issuer, usedJtis: stores.usedJtis }),
    userCodes: createUserCodeCheck({ failures: stores.failures, clock, logger: app.log, policy: userCodePolicy(config) }),
  })
  await app.register(cibaRoutes, { authenticator: w.authenticator, ciba, rateLimit: apiRateLimit(config.rateLimitApi) })
  const approval = createCibaApproval({ clock, requests: stores.cibaRequests, clients: stores.clients, resources: stores.resources, audit: w.audit })
  w.interaction.returnTargets.allow({ path: APPROVE_PATH, describe: approval.describe })
  await app.register(cibaApproveRoutes, { approval, pages: w.interaction.pages })
  w.discovery.contribute(() => ({
    backchannel_authentication_endpoint: `${config.issuer}${CIBA_PATH}`,
    backchannel_token_delivery_modes_supported: ['poll'],
    backchannel_user_code_parameter_supported: true,
    backchannel_authentication_request_signing_alg_values_supported: [...REQUEST_OBJECT_ALGS],
  }))
  return createCibaGrant({ clock, requests: stores.cibaRequests, polling: w.polling, users: stores.users, scopes: w.scopes, tokens: w.tokens })
}

/** The device authorization grant (RFC 8628): its endpoint, the device page, its token grant. */
async function registerDevice(w: Wiring): Promise<GrantHandler<any>> {
  const { app, config, clock, stores } = w
  const devices = createDeviceAuthorization({ config, clock, devices: stores.devices, scopes: w.scopes })
  await app.register(deviceAuthorizationRoutes, { authenticator: w.authenticator, devices, rateLimit: apiRateLimit(config.rateLimitApi) })
  const verification = createDeviceVerification({
    clock, devices: stores.devices, clients: stores.clients, resources: stores.resources, audit: w.audit,
    throttle: createDeviceUserCodeThrottle({ failures: stores.failures, clock, logger: app.log, policy: userCodePolicy(config) }),
  })
  w.interaction.returnTargets.allow({ path: DEVICE_PATH, describe: verification.describe })
  await app.register(deviceRoutes, { verification, pages: w.interaction.pages, rateLimit: pageRateLimit(config.rateLimitSignIn) })
  w.discovery.contribute(() => ({ device_authorization_endpoint: `${config.issuer}${DEVICE_AUTHORIZATION_PATH}` }))
  return createDeviceCodeGrant({ clock, devices: stores.devices, polling: w.polling, users: stores.users, scopes: w.scopes, tokens: w.tokens })
}

/**
 * The authorization code flow (RFC 6749 §4.1, OIDC Core §3.1, RFC 7636, RFC 9207): the
 * authorization endpoint on the shared sign-in, session and consent. Returns its grant.
 */
async function registerAuthorizationCode(w: Wiring, db: Db): Promise<GrantHandler<any>> {
  const { app, config, clock, stores } = w
  const secret = await loadServerSecret(
    { store: createPgServerSecretStore(db), clock, keyEncryptionSecret: config.keyEncryptionSecret, onReplaced: secretReplaced(app.log) },
    'authorize',
  )
  const authorize = createAuthorizeService({
    issuer: config.issuer, codeLifetime: config.authorizationCodeLifetime, clock, clients: stores.clients, resources: stores.resources,
    scopes: w.scopes, consent: w.consent, sessions: w.interaction.sessions, grants: stores.grants, keys: w.keys, secret,
  })
  w.interaction.returnTargets.allow({ path: AUTHORIZE_PATH, describe: authorize.describe })
  await app.register(authorizeRoutes, { authorize, pages: w.interaction.pages })
  w.discovery.contribute(() => ({
    authorization_endpoint: `${config.issuer}${AUTHORIZE_PATH}`,
    response_types_supported: ['code'],
    response_modes_supported: ['query', 'form_post'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    prompt_values_supported: ['none', 'login', 'consent'],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  }))
  await app.register(userinfoRoutes, {
    userinfo: createUserinfoService({ config, reader: w.tokenReader, users: stores.users, resources: stores.resources }),
    realm: config.issuer,
    rateLimit: apiRateLimit(config.rateLimitApi),
  })
  // RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0).
  const endSession = createEndSessionService({ issuer: config.issuer, clients: stores.clients, keys: w.keys })
  await app.register(endSessionRoutes, { endSession, pages: w.interaction.pages })
  w.discovery.contribute(() => ({
    userinfo_endpoint: `${config.issuer}${USERINFO_PATH}`,
    end_session_endpoint: `${config.issuer}${END_SESSION_PATH}`,
    // OpenID Connect Back-Channel Logout 1.0 §2.1: logout tokens are sent, always with sid (as ID tokens carry it).
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
  }))
  return createAuthorizationCodeGrant({ clock, grants: stores.grants, once: w.once, users: stores.users, scopes: w.scopes, tokens: w.tokens })
}

/** The webhook when CIBA_NOTIFICATION_URL is set, else the approval URL in the log (development). */
function defaultNotifier(config: Config, clock: Clock, logger: Logger): CibaNotifier {
  return config.cibaNotificationUrl && config.cibaNotificationSecret
    ? createWebhookNotifier({ url: config.cibaNotificationUrl, secret: config.cibaNotificationSecret, clock, logger })
    : createLogNotifier({ logger })
}

/** Expired state, removed in the background in small batches (src/jobs/cleanup.ts). */
function startCleanup({ app, clock, stores }: Wiring, logger: Logger) {
  const cleanup = createCleanup({
    clock,
    logger,
    tasks: [
      { name: 'cibaRequests', remove: stores.cibaRequests.removeExpired, retentionSeconds: CIBA_RETENTION_SECONDS },
      // Kept as long as CIBA requests past expiry: a late poll still gets expired_token, a replay still revokes.
      { name: 'deviceAuthorizations', remove: stores.devices.removeExpired, retentionSeconds: CIBA_RETENTION_SECONDS },
      { name: 'persistedGrants', remove: stores.grants.removeExpired },
      { name: 'grantFamilies', remove: stores.grants.removeExpiredFamilies },
      { name: 'revokedTokens', remove: stores.revocations.removeExpired },
      { name: 'userSessions', remove: stores.userSessions.removeExpired },
      { name: 'backchannelLogouts', remove: stores.backchannelLogouts.removeExpired },
      { name: 'usedJtis', remove: stores.usedJtis.removeExpired },
      { name: 'failureCounters', remove: stores.failures.removeExpired },
    ],
  })
  cleanup.start()
  app.addHook('onClose', async () => cleanup.stop())
}

/**
 * Request counts and latencies by route pattern (a URL would make the label set unbounded: an
 * unmatched path is "unmatched"), the pool and cleanup gauges, and the metrics listener.
 */
function observeRequests(app: FastifyInstance, metrics: Metrics, db: Db, logger: Logger, clock: Clock): MetricsListener {
  app.addHook('onResponse', (req, reply, done) => {
    metrics.request(req.method, req.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
  const expired = createPgExpiredRowCounter(db, { ciba_requests: CIBA_RETENTION_SECONDS, device_authorizations: CIBA_RETENTION_SECONDS })
  const poolStats = db.poolStats?.bind(db)
  metrics.sources({ ...(poolStats ? { pool: poolStats } : {}), expiredRows: () => expired.count(clock.now()) })
  const listener = createMetricsListener(metrics.registry, (err) => logger.warn({ err }, 'metrics collection failed'))
  app.addHook('onClose', async () => listener.close())
  return listener
}
