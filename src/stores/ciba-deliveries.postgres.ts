// ciba_deliveries: the outbox of CIBA pings and pushes (migrations/0038_ciba_ping_push.sql).
// Rows are queued by the statement that decides a request (ciba-requests.postgres.ts decide); a
// NOTIFY on DELIVERIES_CHANNEL then wakes the worker of every replica. Claims are the outbox's
// (outbox.postgres.ts): rows leased with FOR UPDATE SKIP LOCKED, so two replicas claiming at the
// same moment get different rows, and no more than perClient attempts in flight for one client.
import type { Db, Queryable } from '../db/db.js'
import type { CibaDelivery, CibaDeliveryStore } from './ciba-deliveries.js'
import { deleteExpired, toMs, ts } from './columns.postgres.js'
import { claimDueOutboxRows } from './outbox.postgres.js'

export const DELIVERIES_CHANNEL = 'authz_ciba_deliveries'

/**
 * Wakes the workers once a decision queued a delivery. Only a wake-up: the row is there whether
 * or not the notice arrives, and every worker also polls, so a failure here must not turn a
 * decision already made into an error page.
 */
export async function notifyDeliveryQueued(db: Queryable): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [DELIVERIES_CHANNEL, '1']).catch(() => undefined)
}

interface DeliveryRow {
  id: string
  request_id: string
  client_id: string
  mode: 'ping' | 'push'
  family_id: string
  secret: string | null
  payload: string | null
  attempts: number
}

const toDelivery = (r: DeliveryRow): CibaDelivery => ({
  id: String(r.id),
  requestId: r.request_id,
  clientId: r.client_id,
  mode: r.mode,
  familyId: r.family_id,
  secret: r.secret ?? undefined,
  payload: r.payload ?? undefined,
  attempts: r.attempts,
})

export function createPgCibaDeliveryStore(db: Db): CibaDeliveryStore {
  return {
    async claimDue(now, leaseUntil, limit, perClient, inFlightSince) {
      const rows = await claimDueOutboxRows<DeliveryRow>(
        db,
        'ciba_deliveries',
        'o.id, o.request_id, o.client_id, o.mode, o.family_id, o.secret, o.payload, o.attempts',
        { now, leaseUntil, limit, perClient, inFlightSince },
      )
      return rows.map(toDelivery).sort((a, b) => Number(a.id) - Number(b.id))
    },
    async savePayload(d, payload) {
      const { rowCount } = await db.query(
        `UPDATE ciba_deliveries SET payload = $3 WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
        [d.id, d.attempts, payload],
      )
      return rowCount === 1
    },
    async finish(d, status, r) {
      const { rowCount } = await db.query(
        `UPDATE ciba_deliveries SET status = $3, leased_until = NULL, finished_at = $4::timestamptz, expires_at = $5::timestamptz,
                last_error = $6, http_status = $7, secret = NULL, payload = NULL
          WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
        [d.id, d.attempts, status, ts(r.at), ts(r.expiresAt), r.error ?? null, r.httpStatus ?? null],
      )
      return rowCount === 1
    },
    async retry(d, nextAttemptAt, r) {
      const { rowCount } = await db.query(
        `UPDATE ciba_deliveries SET leased_until = NULL, next_attempt_at = $3::timestamptz, last_error = $4, http_status = $5
          WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
        [d.id, d.attempts, ts(nextAttemptAt), r.error ?? null, r.httpStatus ?? null],
      )
      return rowCount === 1
    },
    async release(d) {
      const { rowCount } = await db.query(
        `UPDATE ciba_deliveries SET leased_until = NULL, attempts = attempts - 1
          WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
        [d.id, d.attempts],
      )
      return rowCount === 1
    },
    async nextDue() {
      const { rows } = await db.query<{ due: Date | string | null }>(
        `SELECT min(GREATEST(next_attempt_at, leased_until)) AS due FROM ciba_deliveries WHERE status = 'pending'`,
      )
      const due = rows[0]?.due
      return due === null || due === undefined ? undefined : toMs(due)
    },
    subscribe(onQueued) {
      return db.listen(DELIVERIES_CHANNEL, () => onQueued())
    },
    removeExpired: (before, limit) => deleteExpired(db, 'ciba_deliveries', 'id', before, limit),
  }
}
