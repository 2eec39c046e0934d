// backchannel_logouts: the outbox of OpenID Connect Back-Channel Logout 1.0 logout tokens to send
// (migrations/0020_backchannel_logout.sql). Rows are queued by the statement that ends a session
// (queueLogoutsSql, used by user-sessions.ts); a NOTIFY on LOGOUTS_CHANNEL then wakes the worker of
// every replica. Claims lease rows with FOR UPDATE SKIP LOCKED: two replicas claiming at the same
// moment get different rows, and a leased row is not claimed again until its lease ends.
import type { Db, Queryable } from '../db/db.js'
import type { BackchannelLogoutStore, LogoutDelivery } from './backchannel-logouts.js'
import type { SessionEndReason } from './user-sessions.js'
import { deleteExpired, toMs, ts } from './columns.postgres.js'
import { claimDueOutboxRows } from './outbox.postgres.js'

export const LOGOUTS_CHANNEL = 'authz_backchannel_logouts'

/**
 * The part of a statement that queues one logout per client of the ended sessions that has a
 * back-channel logout URI. `ended` names a data-modifying CTE returning subject_id, sid and
 * client_ids; $reason and $at are the parameter numbers of the reason and the time.
 */
export function queueLogoutsSql(ended: string, reason: string, at: string): string {
  return `INSERT INTO backchannel_logouts (client_id, subject_id, sid, reason, created_at, next_attempt_at)
    SELECT c.client_id, e.subject_id, e.sid, ${reason}::text, ${at}::timestamptz, ${at}::timestamptz
      FROM ${ended} e JOIN clients c ON c.client_id = ANY (e.client_ids)
     WHERE c.back_channel_logout_uri IS NOT NULL
    RETURNING id`
}

/**
 * Wakes the workers when a statement queued logouts (after it committed: NOTIFY is transactional
 * anyway). Only a wake-up: the session has ended and its logouts are queued whether or not it
 * reaches anyone, and every worker also polls, so a failure here (a connection lost right after
 * the statement) must not turn a finished sign-out into an error page.
 */
export async function notifyQueued(db: Queryable, queued: number): Promise<void> {
  if (queued > 0) await db.query('SELECT pg_notify($1, $2)', [LOGOUTS_CHANNEL, String(queued)]).catch(() => undefined)
}

interface DeliveryRow {
  id: string
  client_id: string
  subject_id: string
  sid: string | null
  reason: SessionEndReason
  attempts: number
}

const toDelivery = (r: DeliveryRow): LogoutDelivery => ({
  id: String(r.id),
  clientId: r.client_id,
  subjectId: r.subject_id,
  sid: r.sid ?? undefined,
  reason: r.reason,
  attempts: r.attempts,
})

export function createPgBackchannelLogoutStore(db: Db): BackchannelLogoutStore {
  return {
    async claimDue(now, leaseUntil, limit, perClient, inFlightSince) {
      const rows = await claimDueOutboxRows<DeliveryRow>(
        db,
        'backchannel_logouts',
        'o.id, o.client_id, o.subject_id, o.sid, o.reason, o.attempts',
        { now, leaseUntil, limit, perClient, inFlightSince },
      )
      return rows.map(toDelivery).sort((a, b) => Number(a.id) - Number(b.id))
    },
    async finish(d, status, r) {
      const { rowCount } = await db.query(
        `UPDATE backchannel_logouts SET status = $3, leased_until = NULL, finished_at = $4::timestamptz,
                expires_at = $5::timestamptz, last_error = $6, http_status = $7
          WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
        [d.id, d.attempts, status, ts(r.at), ts(r.expiresAt), r.error ?? null, r.httpStatus ?? null],
      )
      return rowCount === 1
    },
    async retry(d, nextAttemptAt, r) {
      const { rowCount } = await db.query(
        `UPDATE backchannel_logouts SET leased_until = NULL, next_attempt_at = $3::timestamptz, last_error = $4, http_status = $5
          WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
        [d.id, d.attempts, ts(nextAttemptAt), r.error ?? null, r.httpStatus ?? null],
      )
      return rowCount === 1
    },
    async release(d) {
      const { rowCount } = await db.query(
        `UPDATE backchannel_logouts SET leased_until = NULL, attempts = attempts - 1
          WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
        [d.id, d.attempts],
      )
      return rowCount === 1
    },
    async nextDue() {
      const { rows } = await db.query<{ due: Date | string | null }>(
        // A leased row (an attempt in flight somewhere) is due again only when its lease ends.
        `SELECT min(GREATEST(next_attempt_at, leased_until)) AS due FROM backchannel_logouts WHERE status = 'pending'`,
      )
      const due = rows[0]?.due
      return due === null || due === undefined ? undefined : toMs(due)
    },
    subscribe(onQueued) {
      // undefined (resubscribed after a reconnect) means notices may have been missed: look anyway.
      return db.listen(LOGOUTS_CHANNEL, () => onQueued())
    },
    removeExpired: (before, limit) => deleteExpired(db, 'backchannel_logouts', 'id', before, limit),
  }
}
