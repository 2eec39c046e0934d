// createCore: the stores and the services every flow shares, built once per app, and the
// registries the flows fill in (src/core.ts). One of the composition roots: the only place besides
// main.ts and the CLI that names a PostgreSQL store.
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { createAssertionVerifier } from './client-auth/assertion.js'
import { createClientAuthenticator } from './client-auth/authenticators.js'
import { createClientKeyResolver, JWKS_MAX_BYTES } from './client-auth/client-keys.js'
import { createMetadataDocumentClients, type MetadataDocumentClients } from './client-auth/metadata-document.js'
import { createMetadataFetcher, type MetadataFetchOptions } from './client-auth/metadata-fetch.js'
import { clientAuthPolicy, createClientAuthThrottle } from './client-auth/throttle.js'
import type { Config } from './config.js'
import type { BackgroundWorker, Core, DiscoveryContribution, Interaction, Stores } from './core.js'
import { createBoundedDb } from './db/bounded.js'
import type { Db } from './db/db.js'
import type { Clock } from './domain/clock.js'
import { ACCOUNT_PATH } from './endpoints.js'
import { isUnavailable } from './errors.js'
import { createOneTimeUse } from './grants/one-time-use.js'
import { createPolling } from './grants/polling.js'
import { createGrantRegistry } from './grants/registry.js'
import { createScopeResolver } from './grants/scopes.js'
import { createPageKit } from './http/page-kit.js'
import type { Look } from './pages/look.js'
import { observeRequests } from './http/request-metrics.js'
import { createConsentService } from './interaction/consent.js'
import { createCsrfTokens } from './interaction/csrf.js'
import { createIdentityProviderDirectory, createUpstreamSignOut } from './interaction/identity-providers.js'
import { createPasswordCheck, lockoutPolicy } from './interaction/password-check.js'
import { createPasskeys, issuerCanOfferPasskeys } from './interaction/passkeys.js'
import { createReturnTargets } from './interaction/return-to.js'
import { createSessionService } from './interaction/session.js'
import { CIBA_RETENTION_SECONDS, createCleanup, type CleanupTask } from './jobs/cleanup.js'
import { createSigningKeyService } from './keys/key-service.js'
import { loadServerSecret } from './keys/server-secrets.js'
import { createAuditLog, type AuditSink } from './observe/audit.js'
import { createMetrics, type Metrics } from './observe/metrics.js'
import type { MetricsListener } from './observe/metrics-server.js'
import { createPgBackchannelLogoutStore } from './stores/backchannel-logouts.postgres.js'
import { createPgCibaDeliveryStore } from './stores/ciba-deliveries.postgres.js'
import {
  createCacheInvalidation,
  createCachedClientStore,
  createCachedResourceStore,
  createCachedUserStore,
  type CacheInvalidation,
} from './stores/cached.js'
import { createPgConfigChangeStore } from './stores/config-changes.postgres.js'
import { createPgCibaRequestStore } from './stores/ciba-requests.postgres.js'
import { createPgClientRegistrationStore, createPgRegistrationTokenStore } from './stores/client-registrations.postgres.js'
import { createPgClientStore } from './stores/clients.postgres.js'
import { createPgConsentStore } from './stores/consents.postgres.js'
import { createPgDeviceAuthorizationStore } from './stores/device-authorizations.postgres.js'
import { createPgExpiredRowCounter } from './stores/expired-rows.postgres.js'
import { createPgFailureCounterStore } from './stores/failure-counters.postgres.js'
import { createPgFederatedIdentityStore } from './stores/federated-identities.postgres.js'
import { createPgGrantStore } from './stores/grants.postgres.js'
import { createPgIdentityProviderStore } from './stores/identity-providers.postgres.js'
import { createPgResourceStore } from './stores/resources.postgres.js'
import { createPgRevocationStore } from './stores/revocations.postgres.js'
import { createPgServerSecretStore } from './stores/server-secrets.postgres.js'
import { createPgSigningKeyStore } from './stores/signing-keys.postgres.js'
import { createPgUsedJtiStore } from './stores/used-jtis.postgres.js'
import { createPgPushedRequestStore } from './stores/pushed-requests.postgres.js'
import { createPgPasskeyStore } from './stores/passkeys.postgres.js'
import { createPgUserSessionStore } from './stores/user-sessions.postgres.js'
import { createPgUserStore } from './stores/users.postgres.js'
import { createPgUserFactorStore } from './stores/user-factors.postgres.js'
import { createSecondFactors } from './interaction/second-factor.js'
import { deriveKeyEncryptionKey } from './keys/key-crypto.js'
import { createTokenIssuer } from './tokens/issuer.js'
import { createRevocationList } from './tokens/revocation-list.js'
import { createTokenReader } from './tokens/token-reader.js'
import { createDPoPVerifier } from './tokens/dpop.js'

export interface CoreInputs {
  app: FastifyInstance
  config: Config
  /** The app's database, every wait already bounded (src/db/bounded.ts). */
  db: Db
  clock: Clock
  logger: Logger
  audit: AuditSink
  metrics: Metrics | undefined
  /** The operator's look of every page (src/pages/look.ts). */
  look: Look
  /** Client ID Metadata Document fetches: settings other than the defaults (tests: a short timeout). */
  metadataFetch?: Partial<MetadataFetchOptions> | undefined
}

/** What buildApp keeps of the registries to run them: the cleanup tasks and the workers. */
export interface CoreRuntime {
  cleanupTasks: CleanupTask[]
  workers: Map<string, BackgroundWorker>
}

export async function createCore(inputs: CoreInputs): Promise<{ core: Core; runtime: CoreRuntime }> {
  const { app, config, db, clock, logger, audit } = inputs
  const keys = await startSigningKeys(inputs)
  const invalidation = createCacheInvalidation()
  const stores = createStores(db, config, clock, invalidation)
  const metadataClients = metadataDocumentClients(inputs, stores)
  if (metadataClients) stores.clients = metadataClients.store
  // Before the first request: a change committed from now on drops this replica's caches at once.
  const unlistenChanges = await createPgConfigChangeStore(db).subscribe((change) => invalidation.changed(change))
  app.addHook('onClose', async () => unlistenChanges())
  const secretStore = createPgServerSecretStore(db)
  const serverSecret = (name: string) =>
    loadServerSecret(
      {
        store: secretStore,
        clock,
        keyEncryptionSecret: config.keyEncryptionSecret,
        onReplaced: secretReplaced(logger),
      },
      name,
    )

  const revocationList = createRevocationList({ store: stores.revocations, clock })
  await revocationList.start()
  app.addHook('onClose', async () => revocationList.stop())
  const clientAuthThrottle = createClientAuthThrottle({
    failures: stores.failures,
    clock,
    logger,
    policy: clientAuthPolicy(config),
    staleSeconds: config.clientCacheTtl,
    audit,
  })
  // The key of the digests that stand in for unknown usernames; one for every replica, so they count alike.
  const usernameKey = await serverSecret('username-hmac')
  const passkeysOffered = config.passkeys && issuerCanOfferPasskeys(config.issuer)
  const passwordCheck = createPasswordCheck({
    users: stores.users,
    failures: stores.failures,
    clock,
    logger,
    policy: lockoutPolicy(config),
    audit,
    usernameKey,
    // A right password does not forget the failures of a person with a second factor (one-time
    // codes, or a passkey where passkeys are offered): only the factor does.
    keepsFailures: async (user) =>
      (await stores.userFactors.hasFactor(user.subjectId)) ||
      (passkeysOffered && (await stores.passkeys.listForSubject(user.subjectId)).length > 0),
  })
  const secondFactors = createSecondFactors({
    store: stores.userFactors,
    failures: stores.failures,
    policy: lockoutPolicy(config),
    clock,
    audit,
    issuerName: inputs.look.name,
    encryptionKey: config.keyEncryptionSecret ? deriveKeyEncryptionKey(config.keyEncryptionSecret) : undefined,
  })
  const passkeys = createPasskeys({
    issuer: config.issuer,
    enabled: config.passkeys,
    rpName: inputs.look.name,
    clock,
    store: stores.passkeys,
    users: stores.users,
    usedChallenges: stores.usedJtis,
    failures: stores.failures,
    policy: lockoutPolicy(config),
    audit,
    challengeKey: await serverSecret('passkey-challenge'),
  })
  if (config.passkeys && !passkeys.available)
    logger.warn(
      { issuer: config.issuer },
      "passkeys are on (PASSKEYS) but the issuer's host is an IP address, which cannot be a WebAuthn relying-party id: no passkey is offered; use a host name",
    )
  const oneTimeUse = createOneTimeUse({ clock, grants: stores.grants, revokedJwts: revocationList, audit })
  const scopes = createScopeResolver({ resources: stores.resources })
  const tokenIssuer = createTokenIssuer({ config, clock, keys, grants: stores.grants, users: stores.users, resources: stores.resources })
  const tokenReader = createTokenReader({
    config,
    clock,
    keys,
    grants: stores.grants,
    revocations: revocationList,
    clients: stores.clients,
    users: stores.users,
  })
  const interaction = await createInteraction(app, config, clock, stores, await serverSecret('csrf'), inputs.look)

  const grants = createGrantRegistry()
  const contributions: DiscoveryContribution[] = []
  // Expired rows of the shared stores; the flows add their own (core.cleanup).
  const runtime: CoreRuntime = {
    cleanupTasks: [
      { name: 'persistedGrants', remove: stores.grants.removeExpired },
      { name: 'grantFamilies', remove: stores.grants.removeExpiredFamilies },
      { name: 'revokedTokens', remove: stores.revocations.removeExpired },
      { name: 'userSessions', remove: stores.userSessions.removeExpired },
      { name: 'failureCounters', remove: stores.failures.removeExpired },
      // Client assertions, DPoP proofs, request objects, passkey challenges and upstream logout
      // tokens all record their jti here, whichever flows a deployment runs.
      { name: 'usedJtis', remove: stores.usedJtis.removeExpired },
    ],
    workers: new Map(),
  }
  const strangerKeys = createMetadataFetcher({
    ...inputs.metadataFetch,
    maxBytes: JWKS_MAX_BYTES,
    document: 'the jwks_uri document',
    accept: 'application/jwk-set+json, application/json',
  })
  const clientKeys = createClientKeyResolver({
    clock,
    strangerFetch: async (uri) => (await strangerKeys.get(new URL(uri))).body.toString('utf8'),
    onFetchFailed: (clientId, err) =>
      logger.warn({ client_id: clientId, reason: (err as { reason?: string }).reason }, 'fetching a client jwks_uri failed'),
  })
  const core: Core = {
    app,
    config,
    clock,
    logger,
    stores,
    keys,
    audit,
    metrics: inputs.metrics,
    serverSecret,
    clientAuth: createClientAuthenticator({
      clients: stores.clients,
      clock,
      realm: config.issuer,
      throttle: clientAuthThrottle,
      issuer: config.issuer,
      assertions: createAssertionVerifier({
        clock,
        issuer: config.issuer,
        keys: clientKeys,
        usedJtis: stores.usedJtis,
        keyEncryptionSecret: config.keyEncryptionSecret,
      }),
    }),
    clientAuthThrottle,
    clientKeys,
    metadataClients,
    passwordCheck,
    secondFactors,
    passkeys,
    scopes,
    tokenIssuer,
    tokenReader,
    // Nonces are MACs keyed with a server secret: every replica issues and accepts the same ones.
    dpop: createDPoPVerifier({
      clock,
      usedJtis: stores.usedJtis,
      nonceKey: await serverSecret('dpop-nonce'),
      requireNonce: config.dpopNonceRequired,
    }),
    revocationList,
    oneTimeUse,
    interaction,
    consent: createConsentService({ clock, consents: stores.consents }),
    polling: createPolling({ clock, oneTimeUse }),
    grantDeps: () => ({ config, clock, scopes, tokenIssuer, users: stores.users, tokenReader, oneTimeUse, audit }),
    grants,
    discovery: { contribute: (c) => void contributions.push(c), contributions: () => contributions },
    configChanges: { on: (change, drop) => invalidation.on(change, drop) },
    cleanup: { add: (task) => void runtime.cleanupTasks.push(task) },
    workers: {
      add(name, worker) {
        if (runtime.workers.has(name)) throw new Error(`worker registered twice: ${name}`)
        runtime.workers.set(name, worker)
      },
    },
  }
  return { core, runtime }
}

const OLD_VERSIONS_KEPT =
  'a transaction older than the replacement was still open: old row versions holding the plaintext may remain in this table until VACUUM FULL runs on it again'

/** What loadServerSecret tells when it replaced a secret stored in plaintext (src/keys/server-secrets.ts). */
const secretReplaced = (log: { warn(obj: object, msg: string): void }) => (name: string, purged: boolean) => {
  log.warn({ name, purged }, 'server secret stored in plaintext replaced by a new one encrypted with KEY_ENCRYPTION_SECRET')
  if (!purged) log.warn({ table: 'server_secrets' }, OLD_VERSIONS_KEPT)
}

/** Signing keys: created on first start (all replicas share them), then kept in memory. */
async function startSigningKeys({ app, config, db, clock, logger, audit }: CoreInputs) {
  const keys = createSigningKeyService({
    config,
    store: createPgSigningKeyStore(db),
    clock,
    onRefreshError: (err) => {
      if (!isUnavailable(err)) logger.warn({ err }, 'signing key refresh failed; keeping the loaded keys')
    },
    audit,
  })
  const changes = await keys.ensureKeys()
  if (changes.replaced.length > 0) {
    const replaced = changes.replaced.map((r) => ({ ...r, signsUntil: new Date(r.signsUntil).toISOString() }))
    logger.warn(
      { replaced },
      'signing keys stored in plaintext are replaced by new keys encrypted with KEY_ENCRYPTION_SECRET; copies of the data made before still hold the old keys',
    )
  }
  if (changes.purged === false) logger.warn({ table: 'signing_keys' }, OLD_VERSIONS_KEPT)
  if (changes.erased.length > 0)
    logger.info({ kids: changes.erased }, 'private parts of superseded signing keys erased: they only verify until retired')
  if (changes.removed.length > 0)
    logger.info({ kids: changes.removed }, 'retired signing keys removed: nothing they signed is valid any more')
  app.addHook('onClose', async () => keys.close())
  return keys
}

/** With CLIENT_ID_METADATA_DOCUMENTS: a URL client id is looked up in its document (src/client-auth/metadata-document.ts). */
function metadataDocumentClients(
  { config, clock, logger, metadataFetch }: CoreInputs,
  stores: Stores,
): MetadataDocumentClients | undefined {
  if (!config.clientIdMetadataDocuments) return undefined
  return createMetadataDocumentClients({
    inner: stores.clients,
    fetcher: createMetadataFetcher(metadataFetch),
    clock,
    allowedScopes: config.registrationAllowedScopes,
    onRefused: (clientId, reason) => logger.info({ client_id: clientId, reason }, 'client metadata document refused'),
  })
}

/**
 * Every store, once: cached where the hot path reads configuration, dropped on every change
 * committed anywhere (migration 0031), CLIENT_CACHE_TTL bounding a missed notification.
 */
function createStores(db: Db, config: Config, clock: Clock, invalidation: CacheInvalidation): Stores {
  const cache = { ttlSeconds: config.clientCacheTtl, maxStaleSeconds: config.clientCacheMaxStale, clock, invalidation }
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
    cibaDeliveries: createPgCibaDeliveryStore(db),
    identityProviders: createPgIdentityProviderStore(db),
    federatedIdentities: createPgFederatedIdentityStore(db),
    clientRegistrations: createPgClientRegistrationStore(db),
    registrationTokens: createPgRegistrationTokenStore(db),
    pushedRequests: createPgPushedRequestStore(db),
    userFactors: createPgUserFactorStore(db),
    passkeys: createPgPasskeyStore(db),
  }
}

/**
 * The one session, page kit and CSRF mechanism. The CSRF key is a server secret created once in
 * the database, so every replica accepts the forms of every other.
 */
async function createInteraction(
  app: FastifyInstance,
  config: Config,
  clock: Clock,
  stores: Stores,
  csrfSecret: Buffer,
  look: Look,
): Promise<Interaction> {
  const sessions = createSessionService({
    clock,
    store: stores.userSessions,
    idleSeconds: config.sessionIdleTimeout,
    lifetimeSeconds: config.sessionLifetime,
  })
  const pages = createPageKit(app, {
    issuer: config.issuer,
    sessionLifetime: config.sessionLifetime,
    sessions,
    csrf: createCsrfTokens(csrfSecret),
    look,
  })
  const returnTargets = createReturnTargets()
  returnTargets.allow({ path: ACCOUNT_PATH, describe: async () => ({}) })
  return {
    pages,
    returnTargets,
    sessions,
    providers: createIdentityProviderDirectory(stores.identityProviders),
    upstreamSignOut: createUpstreamSignOut(),
  }
}

/**
 * Every database wait of the app bounded (src/db/bounded.ts); an outage logged when it begins and
 * when it ends, its failed requests counted (503 temporarily_unavailable), never traced one by one.
 */
export function boundDatabase(db: Db, config: Config, logger: Logger): Db {
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
 * Audit events, and when METRICS_PORT is set the metrics: request counts and latencies, the pool,
 * expired rows not yet removed, and the listener that serves them (started by listenMetrics).
 */
export function observe(app: FastifyInstance, db: Db, config: Config, clock: Clock, logger: Logger) {
  const metrics = config.metricsPort === undefined ? undefined : createMetrics()
  const audit = createAuditLog({ logger, listeners: metrics ? [metrics.audit] : [] })
  const expired = createPgExpiredRowCounter(db, { ciba_requests: CIBA_RETENTION_SECONDS, device_authorizations: CIBA_RETENTION_SECONDS })
  const poolStats = db.poolStats?.bind(db)
  const listener =
    metrics &&
    observeRequests(app, metrics, { ...(poolStats ? { pool: poolStats } : {}), expiredRows: () => expired.count(clock.now()) }, logger)
  const listenMetrics = async (): Promise<MetricsListener | undefined> => {
    if (!listener || config.metricsPort === undefined) return undefined
    const address = await listener.listen(config.metricsPort, config.metricsHost)
    logger.info({ address: address.address, port: address.port }, 'metrics listening')
    return listener
  }
  return { metrics, audit, listenMetrics }
}

/**
 * The cleanup of expired rows (src/jobs/cleanup.ts, in small batches) and the flows' workers:
 * workers start once the app is ready; on close an attempt in flight is handed back, not waited for.
 */
export function runInBackground(app: FastifyInstance, runtime: CoreRuntime, clock: Clock, logger: Logger): void {
  const cleanup = createCleanup({ clock, logger, tasks: runtime.cleanupTasks })
  cleanup.start()
  app.addHook('onClose', async () => cleanup.stop())
  app.addHook('onReady', async () => {
    await Promise.all([...runtime.workers.values()].map((w) => w.start()))
  })
  app.addHook('onClose', async () => {
    await Promise.all([...runtime.workers.values()].map((w) => w.stop()))
  })
}
