// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (used-jtis.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.

/**
 * One-time values already seen, per client or key, until they expire: the jti of request objects
 * (RFC 9101, CIBA Core §7.1.1), client assertions (RFC 7523 §3), DPoP proofs (RFC 9449 §11.1),
 * and passkey challenges.
 */
export interface UsedJtiStore {
  /** Records the jti; false when it is already recorded and not yet expired at `now`. */
  use(clientId: string, jti: string, expiresAt: number, now: number): Promise<boolean>
  removeExpired(before: number, limit: number): Promise<number>
}
