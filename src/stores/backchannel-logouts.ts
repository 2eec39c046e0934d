// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (backchannel-logouts.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.
import type { SessionEndReason } from './user-sessions.js'

/** One queued back-channel logout (OpenID Connect Back-Channel Logout 1.0 §2.5), as claimed for an attempt. */
export interface LogoutDelivery {
  id: string
  clientId: string
  subjectId: string
  sid: string | undefined
  reason: SessionEndReason
  /** Attempts so far, this one included. */
  attempts: number
}

/** How an attempt ended, as recorded. */
export interface LogoutAttemptRecord {
  /** ms */
  at: number
  /** A fixed word: timeout, connection_failed, http_status, … */
  error?: string | undefined
  httpStatus?: number | undefined
}

/**
 * The back-channel logout outbox (migrations/0020_backchannel_logout.sql). Rows are queued by
 * UserSessionStore when a session ends; a worker claims due rows under a lease, so that no two
 * workers (replicas) send one row at the same time, and records each attempt's outcome. A record
 * applies only while the claim is the latest one (same attempt count): a worker whose lease ran
 * out cannot overwrite a later attempt's outcome.
 */
export interface BackchannelLogoutStore {
  /**
   * Claims at most `limit` pending rows due at `now` and not leased, leasing them until
   * `leaseUntil` (ms), and no row of a client that already has `perClient` attempts in flight:
   * rows leased by claims made after `inFlightSince` (ms; older attempts have timed out, wherever
   * they ran, even if their lease still holds).
   */
  claimDue(now: number, leaseUntil: number, limit: number, perClient: number, inFlightSince: number): Promise<LogoutDelivery[]>
  /** Final outcome: delivered or failed; the row is removed by the cleanup after `expiresAt`. */
  finish(d: LogoutDelivery, status: 'delivered' | 'failed', r: LogoutAttemptRecord & { expiresAt: number }): Promise<boolean>
  /** A failed attempt to be retried at `nextAttemptAt` (ms). */
  retry(d: LogoutDelivery, nextAttemptAt: number, r: LogoutAttemptRecord): Promise<boolean>
  /** An attempt cut short by shutdown: not counted, due again at once (for another replica). */
  release(d: LogoutDelivery): Promise<boolean>
  /** When the next pending row is due (ms; a leased one when its lease ends), or undefined. */
  nextDue(): Promise<number | undefined>
  /** Calls `onQueued` when any replica (or the CLI) queues logouts; resolves to an unsubscribe function. */
  subscribe(onQueued: () => void): Promise<() => Promise<void>>
  removeExpired(before: number, limit: number): Promise<number>
}
