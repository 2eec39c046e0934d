// The contract between the server and its flows. Every flow (src/flows/<flow>/index.ts) is a
// `Flow`: buildApp creates one `Core` and calls each flow's register(core), in the order of the
// list in src/app.ts. A flow adds its routes to `core.app`, and through the registries below its
// grant, its discovery members, the pages the sign-in page may return to, its cleanup tasks and
// its background workers. A flow uses what the Core offers and never imports another flow; what
// two flows share moves into one of the shared folders (ARCHITECTURE.md).
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { AdminListener } from './admin/server.js'
import type { ClientAuthenticator } from './client-auth/authenticators.js'
import type { ClientKeyResolver } from './client-auth/client-keys.js'
import type { MetadataDocumentClients } from './client-auth/metadata-document.js'
import type { ClientAuthThrottle } from './client-auth/throttle.js'
import type { Config } from './config.js'
import type { Clock } from './domain/clock.js'
import type { OneTimeUse } from './grants/one-time-use.js'
import type { Polling } from './grants/polling.js'
import type { GrantDeps, GrantRegistry } from './grants/registry.js'
import type { ScopeResolver } from './grants/scopes.js'
import type { PageKit } from './http/page-kit.js'
import type { ConsentService } from './interaction/consent.js'
import type { IdentityProviderDirectory, UpstreamSignOut } from './interaction/identity-providers.js'
import type { PasswordCheck } from './interaction/password-check.js'
import type { Passkeys } from './interaction/passkeys.js'
import type { ReturnTargets } from './interaction/return-to.js'
import type { SessionService } from './interaction/session.js'
import type { CleanupTask } from './jobs/cleanup.js'
import type { SigningKeyService } from './keys/signing-keys.js'
import type { AuditSink } from './observe/audit.js'
import type { Metrics } from './observe/metrics.js'
import type { MetricsListener } from './observe/metrics-server.js'
import type { BackchannelLogoutStore } from './stores/backchannel-logouts.js'
import type { CibaDeliveryStore } from './stores/ciba-deliveries.js'
import type { CibaRequestStore } from './stores/ciba-requests.js'
import type { ClientRegistrationStore, RegistrationTokenStore } from './stores/client-registrations.js'
import type { ClientStore } from './stores/clients.js'
import type { ConfigChange } from './stores/config-changes.js'
import type { ConsentStore } from './stores/consents.js'
import type { DeviceAuthorizationStore } from './stores/device-authorizations.js'
import type { FailureCounterStore } from './stores/failure-counters.js'
import type { FederatedIdentityStore } from './stores/federated-identities.js'
import type { GrantStore } from './stores/grants.js'
import type { IdentityProviderStore } from './stores/identity-providers.js'
import type { ResourceStore } from './stores/resources.js'
import type { RevocationStore } from './stores/revocations.js'
import type { UsedJtiStore } from './stores/used-jtis.js'
import type { PushedRequestStore } from './stores/pushed-requests.js'
import type { PasskeyStore } from './stores/passkeys.js'
import type { UserSessionStore } from './stores/user-sessions.js'
import type { UserStore } from './stores/users.js'
import type { UserFactorStore } from './stores/user-factors.js'
import type { SecondFactors } from './interaction/second-factor.js'
import type { TokenIssuer } from './tokens/issuer.js'
import type { RevocationList } from './tokens/revocation-list.js'
import type { TokenReader } from './tokens/token-reader.js'
import type { DPoPVerifier } from './tokens/dpop.js'

/** A flow: its name (for logs and the worker list) and how it adds itself to the server. */
export interface Flow {
  readonly name: string
  register(core: Core): Promise<void>
}

/** Every store, once; clients, resources and users behind the CLIENT_CACHE_TTL cache. */
export interface Stores {
  clients: ClientStore
  resources: ResourceStore
  users: UserStore
  grants: GrantStore
  revocations: RevocationStore
  cibaRequests: CibaRequestStore
  userSessions: UserSessionStore
  usedJtis: UsedJtiStore
  failures: FailureCounterStore
  consents: ConsentStore
  devices: DeviceAuthorizationStore
  backchannelLogouts: BackchannelLogoutStore
  cibaDeliveries: CibaDeliveryStore
  identityProviders: IdentityProviderStore
  federatedIdentities: FederatedIdentityStore
  /** Clients that registered themselves (RFC 7591, RFC 7592). */
  clientRegistrations: ClientRegistrationStore
  /** Initial access tokens for registration (RFC 7591 §3). */
  registrationTokens: RegistrationTokenStore
  pushedRequests: PushedRequestStore
  userFactors: UserFactorStore
  passkeys: PasskeyStore
}

/** Members of the discovery document (OpenID Connect Discovery 1.0 §3, RFC 8414 §2). */
export type DiscoveryMetadata = Record<string, unknown>
/** Called for every document, so it may read live state (the grant list, the catalogue). */
export type DiscoveryContribution = () => DiscoveryMetadata | Promise<DiscoveryMetadata>

/** A task that runs in the background from onReady to onClose (back-channel logout delivery). */
export interface BackgroundWorker {
  /** Awaited when the app is ready: a worker that cannot start fails the start-up. */
  start(): Promise<void>
  /** Stops; an attempt in flight is handed back, not waited for. */
  stop(): Promise<void>
}

/** The person's side that every interactive flow builds on. */
export interface Interaction {
  /** Cookies, CSRF and Origin checks, page sending, the way to sign-in (src/http/page-kit.ts). */
  pages: PageKit
  /** Register the flow's page here so the sign-in page may return to it and name its client. */
  returnTargets: ReturnTargets
  sessions: SessionService
  /** The upstream identity providers a sign-in may use (src/interaction/identity-providers.ts). */
  providers: IdentityProviderDirectory
  /** Signing out upstream when a session that began there ends (provided by the federation flow). */
  upstreamSignOut: UpstreamSignOut & { provide(impl: UpstreamSignOut): void }
}

export interface Core {
  /** Add routes here (a Fastify plugin per flow: `await core.app.register(routes, options)`). */
  app: FastifyInstance
  config: Config
  clock: Clock
  logger: Logger
  stores: Stores
  /** Signs and verifies every JWT we issue, without a database round trip. */
  keys: SigningKeyService
  /** Audit events: every security-relevant outcome (src/observe/audit.ts). */
  audit: AuditSink
  /** Undefined unless METRICS_PORT is set. */
  metrics: Metrics | undefined
  /** A server-wide secret shared by every replica (created once, encrypted at rest when configured). */
  serverSecret(name: string): Promise<Buffer>

  /** Authenticates the client of a request at the token, revocation, CIBA and device endpoints. */
  clientAuth: ClientAuthenticator
  /**
   * With CLIENT_ID_METADATA_DOCUMENTS: the clients whose client id is the URL of their metadata
   * document, found with the reason a document fails (stores.clients finds them too, without it).
   */
  metadataClients: MetadataDocumentClients | undefined
  /** Failed client and API secrets, throttled per client and address on every replica. */
  clientAuthThrottle: ClientAuthThrottle
  /** A client's public keys (jwks or jwks_uri) for the JWTs it signs: assertions, request objects. */
  clientKeys: ClientKeyResolver
  /** Every password check (sign-in pages, password grant): lockout and failure logs. */
  passwordCheck: PasswordCheck
  /** One-time codes and recovery codes: enrolment and every check (counted toward the password lockout). */
  secondFactors: SecondFactors
  /** Passkeys: registration and sign-in (WebAuthn), throttled with the password's lockout. */
  passkeys: Passkeys
  /** Scope and resource validation (invalid_scope, invalid_target), as every grant does it. */
  scopes: ScopeResolver
  /** Issues the token response: access token, and ID and refresh tokens when asked. */
  tokenIssuer: TokenIssuer
  /** What a presented token of ours is (introspection, userinfo, token exchange). */
  tokenReader: TokenReader
  /** The one DPoP proof checker (RFC 9449) of every endpoint that takes proofs, with the server's nonces. */
  dpop: DPoPVerifier
  /** This replica's copy of the revoked JWT ids. */
  revocationList: RevocationList
  /** Remembered consent, for every flow in which a person decides. */
  consent: ConsentService
  /** Use once, revoke the family: every grant that redeems a one-time artefact goes through it. */
  oneTimeUse: OneTimeUse
  /** The polling rules every polled grant (CIBA, device_code) shares. */
  polling: Polling
  interaction: Interaction
  /** What an extension grant is given (GrantFactory). */
  grantDeps(): GrantDeps

  /** The token endpoint's grants: add one handler per grant_type. */
  grants: GrantRegistry
  /** Publish what the flow implements: `core.discovery.contribute(() => ({ ... }))`. */
  discovery: { contribute(contribution: DiscoveryContribution): void; contributions(): DiscoveryContribution[] }
  /**
   * Drop what the flow keeps of the configuration when a change of this kind is committed by
   * anyone on any replica (the NOTIFY of migrations 0031 and 0034).
   */
  configChanges: { on(change: ConfigChange, drop: () => void): void }
  /** Expired rows to remove in the background (src/jobs/cleanup.ts). */
  cleanup: { add(task: CleanupTask): void }
  /** A background worker, started when the app is ready and stopped when it closes. */
  workers: { add(name: string, worker: BackgroundWorker): void }
}

/** What other parts of the app (main.ts, tests, embedders) reach through app.authz. */
export interface CoreServices extends Pick<Core, 'clock' | 'keys' | 'interaction' | 'audit' | 'metrics'> {
  /** Starts the metrics listener on METRICS_HOST:METRICS_PORT (nothing when unset); closed with the app. */
  listenMetrics(): Promise<MetricsListener | undefined>
  /** The admin API's listener (its app for app.inject); undefined unless ADMIN_PORT is set. */
  admin: AdminListener | undefined
  /** Starts the admin listener on ADMIN_HOST:ADMIN_PORT (nothing when unset); closed with the app. */
  listenAdmin(): Promise<AdminListener | undefined>
  /**
   * On the embedded database: serves the admin API to the CLI of `dataDir` (a socket there, and
   * the file saying how to reach it, src/admin/local-access.ts); closed with the app.
   */
  listenLocalAdmin(dataDir: string): Promise<void>
  /** The background workers the flows registered, by name (e.g. 'backchannel-logout'). */
  workers: ReadonlyMap<string, BackgroundWorker>
}

declare module 'fastify' {
  interface FastifyInstance {
    authz: CoreServices
  }
}
