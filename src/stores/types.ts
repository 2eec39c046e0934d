// Store interfaces, named with domain verbs. They return undefined when nothing is found.
// Implementations live in src/stores/postgres/ (the only SQL in the project).
// Times are milliseconds since the epoch and always come from the caller (the injected Clock),
// never from SQL now(), so that tests control protocol time.
import type { ApiResource, ApiScope, Client, GrantKind, IdentityResource, PersistedGrant, User } from '../domain/types.js'

export interface ClientStore {
  findById(clientId: string): Promise<Client | undefined>
  list(): Promise<Client[]>
  /** Deletes the client and its secrets; false when there was none. */
  remove(clientId: string): Promise<boolean>
  /** Adds a hashed secret; false when the client does not exist. */
  addSecret(clientId: string, secret: { valueHash: string; expiresAt?: number; description?: string }): Promise<boolean>
}

/** Everything scope validation needs, small enough to keep in memory. */
export interface ResourceCatalogue {
  apiScopes: Map<string, ApiScope>
  apiResources: Map<string, ApiResource>
  identityResources: Map<string, IdentityResource>
}

export interface ResourceStore {
  loadCatalogue(): Promise<ResourceCatalogue>
  findApiResource(name: string): Promise<ApiResource | undefined>
}

export interface UserStore {
  findBySubjectId(subjectId: string): Promise<User | undefined>
  findByUsername(username: string): Promise<User | undefined>
  /** CIBA login_hint: a username, a subject id or an e-mail address (case-insensitive). */
  findByLoginHint(hint: string): Promise<User | undefined>
  /** Creates or replaces the user with this username (admin CLI). */
  upsert(user: User): Promise<void>
}

export interface NewGrant {
  /** The raw handle; the store keeps only its hash. For jwt_access_token: the jti. */
  handle: string
  kind: GrantKind
  clientId: string
  subjectId: string | undefined
  familyId: string
  data: Record<string, unknown>
  createdAt: number
  expiresAt: number | undefined
}

export interface GrantStore {
  store(grant: NewGrant): Promise<void>
  /** Looks a handle up by its hash, whatever its state. */
  find(handle: string, kind?: GrantKind): Promise<PersistedGrant | undefined>
  /**
   * Single use in one statement: marks the grant consumed and returns it, or returns undefined
   * when it does not exist, is of another kind, or was consumed already.
   */
  consume(handle: string, kind: GrantKind, at: number): Promise<PersistedGrant | undefined>
  /** Removes one grant (revocation of a refresh or reference token); false when none. */
  remove(handle: string, kind: GrantKind, clientId: string): Promise<boolean>
  /**
   * Revokes everything issued from one grant: deletes the family's rows and records the jti
   * of each JWT access token in it as revoked. Returns the number of rows removed.
   */
  revokeFamily(familyId: string, at: number): Promise<number>
  /** Deletes grants that expired before `before`, at most `limit` rows; returns how many. */
  removeExpired(before: number, limit: number): Promise<number>
}

export interface RevocationStore {
  /** Records a revoked JWT access token until its expiry and tells every replica (NOTIFY). */
  revoke(entry: { jti: string; clientId: string; expiresAt: number; revokedAt: number }): Promise<void>
  /** All revocations still in force at `now`: the replica's in-memory set is rebuilt from this. */
  listActive(now: number): Promise<Array<{ jti: string; expiresAt: number }>>
  removeExpired(before: number, limit: number): Promise<number>
}
