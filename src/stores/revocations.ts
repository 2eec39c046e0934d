// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (revocations.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.

export interface RevocationStore {
  /** Records a revoked JWT access token until its expiry and tells every replica (NOTIFY). */
  revoke(entry: { jti: string; clientId: string; expiresAt: number; revokedAt: number }): Promise<void>
  /** All revocations still in force at `now`: the replica's in-memory set is rebuilt from this. */
  listActive(now: number): Promise<Array<{ jti: string; expiresAt: number }>>
  /**
   * Calls `onRevoked` for every revocation committed by any replica, and with `undefined` after the
   * subscription was re-established (some may have been missed: reload). Resolves to an unsubscribe.
   */
  subscribe(onRevoked: (entry: { jti: string; expiresAt: number } | undefined) => void): Promise<() => Promise<void>>
  removeExpired(before: number, limit: number): Promise<number>
}
