// What the admin API is given by its composition root (src/create-admin.ts): the stores as the
// database has them now (never a replica's cache: a write is judged against what is stored), the
// seed file's apply for writes in the seed's own shapes, and the Core's token reader and audit.
import type { Clock } from '../domain/clock.js'
import type { ConsentService } from '../interaction/consent.js'
import type { SigningKeyService } from '../keys/signing-keys.js'
import type { AuditSink } from '../observe/audit.js'
import type { CibaRequestStore } from '../stores/ciba-requests.js'
import type { RegistrationTokenStore } from '../stores/client-registrations.js'
import type { ClientStore } from '../stores/clients.js'
import type { FailureCounterStore } from '../stores/failure-counters.js'
import type { FederatedIdentityStore } from '../stores/federated-identities.js'
import type { PasskeyStore } from '../stores/passkeys.js'
import type { IdentityProviderStore } from '../stores/identity-providers.js'
import type { ResourceStore } from '../stores/resources.js'
import type { UserFactorStore } from '../stores/user-factors.js'
import type { UserSessionStore } from '../stores/user-sessions.js'
import type { UserStore } from '../stores/users.js'
import type { DPoPVerifier } from '../tokens/dpop.js'
import type { TokenReader } from '../tokens/token-reader.js'

/** The stores an admin read or write uses, uncached. */
export interface AdminStores {
  clients: ClientStore
  users: UserStore
  resources: ResourceStore
  sessions: Pick<UserSessionStore, 'removeAllForSubject'>
  failures: Pick<FailureCounterStore, 'clearName' | 'listBlocked'>
  identityProviders: IdentityProviderStore
  federatedIdentities: Pick<FederatedIdentityStore, 'listForSubject'>
  factors: Pick<UserFactorStore, 'find' | 'remove'>
  /** A passkey is a second factor too: a reset removes them. */
  passkeys: Pick<PasskeyStore, 'listForSubject' | 'removeAllForSubject'>
}

export interface AdminWork extends AdminStores {
  /**
   * Checks a seed document of one resource and applies it in this transaction (src/seed/apply.ts),
   * an identity provider's clientSecret left out keeping the stored one; throws SeedError listing
   * every problem, each with its JSON path.
   */
  applySeed(input: unknown): Promise<void>
  /** applySeed for a whole document: how many entries of each kind it had, and the seed's warnings. */
  applySeedDocument(input: unknown): Promise<SeedApplied>
}

export interface SeedApplied {
  counts: {
    apiScopes: number
    apiResources: number
    identityResources: number
    clients: number
    users: number
    identityProviders: number
  }
  /** Settings the document asks for that the server overrides (src/seed/check.ts seedWarnings). */
  warnings: string[]
}

export interface AdminDeps {
  /**
   * One admin write in one transaction; admin writes run one at a time, so that what a write read
   * to check its preconditions is still what is stored when it commits.
   */
  write<T>(fn: (work: AdminWork) => Promise<T>): Promise<T>
  read: AdminStores
  tokenReader: Pick<TokenReader, 'read'>
  /** The proofs of DPoP-bound admin tokens (RFC 9449 §7), checked as userinfo checks them. */
  dpop: Pick<DPoPVerifier, 'verify' | 'currentNonce'>
  keys: Pick<SigningKeyService, 'list' | 'rotate'>
  consents: Pick<ConsentService, 'list' | 'revoke'>
  /** Each decision is one statement of its own (src/grants/ciba-decision.ts), outside the admin write lock. */
  cibaRequests: Pick<CibaRequestStore, 'list' | 'findById' | 'decide'>
  /** The initial access tokens of client registration: each change is one statement, outside the admin write lock. */
  registrationTokens: Pick<RegistrationTokenStore, 'create' | 'list' | 'revoke'>
  /** The migrations applied to the database, in order (schema_migrations). */
  appliedMigrations(): Promise<{ version: string; name: string; checksum: string }[]>
  clock: Clock
  audit: AuditSink
  /** The key of the resources' ETags (src/admin/etag.ts): the server secret 'admin-etag', the same on every replica. */
  etagKey: Buffer
  /** The realm of WWW-Authenticate challenges (RFC 6750 §3): the issuer, the audience an admin token must name. */
  realm: string
}

/** Who calls: the client of the access token, and whether it may write (authz:admin). */
export interface AdminCaller {
  clientId: string
  canWrite: boolean
}
