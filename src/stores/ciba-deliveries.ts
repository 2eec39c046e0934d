// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (ciba-deliveries.postgres.ts) is the SQL. Times are milliseconds since
// the epoch from the caller (the injected Clock), never SQL now(), so that tests control protocol time.

/** One queued CIBA ping or push (OpenID CIBA Core 1.0 §10.2, §10.3), as claimed for an attempt. */
export interface CibaDelivery {
  id: string
  /** The CIBA request's id (never its auth_req_id). */
  requestId: string
  clientId: string
  mode: 'ping' | 'push'
  familyId: string
  /** The sealed auth_req_id and client_notification_token (src/flows/ciba/sealed.ts); undefined once finished. */
  secret: string | undefined
  /** Push: the sealed body to POST, once the tokens are issued. */
  payload: string | undefined
  /** Attempts so far, this one included. */
  attempts: number
}

/** How an attempt ended, as recorded. */
export interface CibaDeliveryAttempt {
  /** ms */
  at: number
  /** A fixed word: timeout, connection_failed, http_status, … */
  error?: string | undefined
  httpStatus?: number | undefined
}

/**
 * The ping and push outbox (migrations/0038_ciba_ping_push.sql), the design of the back-channel
 * logout outbox (backchannel-logouts.ts). Rows are queued by CibaRequestStore.decide in the
 * statement that decides; a worker claims due rows under a lease and records each outcome, which
 * applies only while its claim is the latest one (same attempt count).
 */
export interface CibaDeliveryStore {
  /**
   * Claims at most `limit` pending rows due at `now` and not leased, leasing them until
   * `leaseUntil` (ms), and no row of a client that already has `perClient` attempts in flight:
   * rows leased by claims made after `inFlightSince` (ms; older attempts have timed out, wherever
   * they ran, even if their lease still holds).
   */
  claimDue(now: number, leaseUntil: number, limit: number, perClient: number, inFlightSince: number): Promise<CibaDelivery[]>
  /** Push: keeps the sealed body to send (this and every retry); false when the claim is no longer the latest. */
  savePayload(d: CibaDelivery, payload: string): Promise<boolean>
  /** Final outcome; the secret and the payload are erased, the row removed by the cleanup after `expiresAt`. */
  finish(d: CibaDelivery, status: 'delivered' | 'failed', r: CibaDeliveryAttempt & { expiresAt: number }): Promise<boolean>
  /** A failed attempt to be retried at `nextAttemptAt` (ms). */
  retry(d: CibaDelivery, nextAttemptAt: number, r: CibaDeliveryAttempt): Promise<boolean>
  /** An attempt cut short by shutdown: not counted, due again at once. */
  release(d: CibaDelivery): Promise<boolean>
  /** When the next pending row is due (ms; a leased one when its lease ends), or undefined. */
  nextDue(): Promise<number | undefined>
  /** Calls `onQueued` when any replica (or the CLI) queues a delivery; resolves to an unsubscribe function. */
  subscribe(onQueued: () => void): Promise<() => Promise<void>>
  removeExpired(before: number, limit: number): Promise<number>
}
