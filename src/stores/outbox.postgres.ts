// The claim shared by the two outbox tables, backchannel_logouts (backchannel-logouts.postgres.ts)
// and ciba_deliveries (ciba-deliveries.postgres.ts): the same columns for the lease and the
// bound (status, next_attempt_at, leased_until, claimed_at, attempts, client_id), the same SQL.
import type { Queryable } from '../db/db.js'
import { ts } from './columns.postgres.js'

/** The outbox tables: their names are never input. */
export type OutboxTable = 'backchannel_logouts' | 'ciba_deliveries'

/**
 * Claims at most `limit` pending rows of `table` due at `now` and not leased, leasing them until
 * `leaseUntil` and counting the attempt, and no row of a client that already has `perClient`
 * attempts in flight (rows leased by claims made after `inFlightSince`); returns `returning`
 * (columns of the table, aliased `o`) of each row claimed, in no particular order.
 */
export async function claimDueOutboxRows<R extends object>(
  db: Queryable,
  table: OutboxTable,
  returning: string,
  c: { now: number; leaseUntil: number; limit: number; perClient: number; inFlightSince: number },
): Promise<R[]> {
  // Fair across clients: a client's due rows are claimed only while fewer than perClient of its
  // attempts are in flight (on any replica), so that a backlog for one client whose receiver
  // hangs cannot fill every slot and hold up the others' rows. Two replicas claiming at the same
  // moment may each go up to the bound. In flight: leased by a claim since inFlightSince; a row
  // still leased after that (its worker died, or could not save the outcome) is not claimed
  // again, but no longer counts (migrations/0026; ciba_deliveries had claimed_at from the start).
  // FOR UPDATE SKIP LOCKED: two replicas claiming at the same moment get different rows.
  const { rows } = await db.query<R>(
    `WITH busy AS (
       SELECT client_id, count(*)::int AS n FROM ${table}
        WHERE status = 'pending' AND leased_until > $1::timestamptz
          AND (claimed_at IS NULL OR claimed_at > $5::timestamptz)
        GROUP BY client_id),
     due AS (
       SELECT id, client_id, row_number() OVER (PARTITION BY client_id ORDER BY next_attempt_at, id)::int AS n
         FROM ${table}
        WHERE status = 'pending' AND next_attempt_at <= $1::timestamptz
          AND (leased_until IS NULL OR leased_until <= $1::timestamptz))
     UPDATE ${table} o SET attempts = o.attempts + 1, leased_until = $2::timestamptz, claimed_at = $1::timestamptz
      WHERE o.id IN (
        SELECT id FROM ${table}
         WHERE id IN (SELECT due.id FROM due LEFT JOIN busy USING (client_id) WHERE due.n + coalesce(busy.n, 0) <= $4)
           AND status = 'pending' AND next_attempt_at <= $1::timestamptz
           AND (leased_until IS NULL OR leased_until <= $1::timestamptz)
         ORDER BY next_attempt_at, id LIMIT $3
         FOR UPDATE SKIP LOCKED)
      RETURNING ${returning}`,
    [ts(c.now), ts(c.leaseUntil), c.limit, c.perClient, ts(c.inFlightSince)],
  )
  return rows
}
