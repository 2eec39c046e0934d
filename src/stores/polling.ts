// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (polling.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.

/** What a poll of a pending grant (CIBA request, device code) did: see PolledGrantStore.recordPoll. */
export interface PollRecord {
  accepted: boolean
  intervalSeconds: number
}

/**
 * The polling side of a grant a client polls for (OpenID CIBA Core §11, RFC 8628 §3.5); the
 * token grants share its rules (src/grants/polling.ts).
 */
export interface PolledGrantStore<R> {
  /**
   * The throttle in one statement: a poll at least `interval` seconds after the last accepted
   * one (or the first poll) is accepted and stamped; a sooner one is refused, does not move the
   * stamp, and grows the stored interval by 5 s. undefined when the row is gone.
   */
  recordPoll(id: string, now: number): Promise<PollRecord | undefined>
  /** Single use: marks an approved, unexpired, unconsumed row consumed; undefined otherwise. */
  consume(id: string, now: number): Promise<R | undefined>
}
