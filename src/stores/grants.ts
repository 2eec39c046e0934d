// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (grants.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.
import type { GrantKind, PersistedGrant } from '../domain/types.js'

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

/** A grant issued into a family: the family is named once, by GrantStore.issueIntoFamily. */
export type FamilyGrant = Omit<NewGrant, 'familyId'>

/** What revoking a family took with it. */
export interface RevokedFamily {
  /** Rows deleted: every token of the family still stored. */
  removed: number
  /** The family's unexpired JWT access tokens, now in revoked_tokens (every replica hears of them). */
  revokedJtis: Array<{ jti: string; expiresAt: number }>
}

export interface GrantStore {
  /**
   * Stores one grant without looking at its family: a client_credentials reference token (its own
   * family), or a one-time artefact (authorization or device code) before anything is issued
   * from it. Tokens issued into a family go through issueIntoFamily instead.
   */
  store(grant: NewGrant): Promise<void>
  /** Looks a handle up by its hash, whatever its state. */
  find(handle: string, kind?: GrantKind): Promise<PersistedGrant | undefined>
  /**
   * Single use in one statement: marks the grant consumed and returns it, or returns undefined
   * when it does not exist, is of another kind, or was consumed already. `redemptionHash`, a
   * digest of the consuming request (never a secret in clear), is recorded in the same statement,
   * so whoever finds the grant consumed also finds who consumed it.
   */
  consume(handle: string, kind: GrantKind, at: number, redemptionHash?: string): Promise<PersistedGrant | undefined>
  /**
   * The family of a JWT access token, by jti, read in one snapshot with whether the jti is revoked.
   * A family's revocation deletes the token's row and revokes its jti in one transaction, so a
   * token whose row is gone because its family was revoked is never taken for one of no family.
   */
  findJwtFamily(jti: string): Promise<{ familyId: string | undefined; revoked: boolean }>
  /** Removes one grant (revocation of a reference token); false when none. */
  remove(handle: string, kind: GrantKind, clientId: string): Promise<boolean>
  /**
   * Stores every grant of one issuance into a family in one statement, unless the family has been
   * revoked: then nothing is stored and the answer is false. Excludes revokeFamily (both lock the
   * family's row): a revocation either sees and deletes these grants, or this call sees it.
   * Creates the family at its first issuance; `at` is then its creation time.
   */
  issueIntoFamily(familyId: string, grants: FamilyGrant[], at: number): Promise<boolean>
  /**
   * Revokes everything issued from one grant, in one transaction: marks the family revoked (so
   * nothing can be issued into it any more), deletes its rows and records the jti of each
   * unexpired JWT access token in it as revoked.
   */
  revokeFamily(familyId: string, at: number): Promise<RevokedFamily>
  /**
   * The families of the grants stored for the subject and the client, codes included: what
   * revoking the person's permission for an application revokes (the account page).
   */
  familiesOf(subjectId: string, clientId: string): Promise<string[]>
  /**
   * The clients holding tokens issued for the subject that are alive at `now` (refresh tokens,
   * reference and JWT access tokens), each with when the oldest was issued, by client id.
   */
  clientsHolding(subjectId: string, now: number): Promise<Array<{ clientId: string; since: number }>>
  /** Deletes grants that expired before `before`, at most `limit` rows; returns how many. */
  removeExpired(before: number, limit: number): Promise<number>
  /** Deletes families whose every token expired before `before`, at most `limit`; returns how many. */
  removeExpiredFamilies(before: number, limit: number): Promise<number>
}
