// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (used-jtis.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.

/** jti values already seen per client (request-object replay protection). */
export interface UsedJtiStore {
  /** Records the jti; false when it is already recorded and not yet expired at `now`. */
  use(clientId: string, jti: string, expiresAt: number, now: number): Promise<boolean>
  removeExpired(before: number, limit: number): Promise<number>
}
