// The poll throttle of every grant a client polls for (OpenID CIBA Core §11 and RFC 8628 §3.5:
// slow_down, and the interval grows by 5 seconds), one statement on the grant's own table, so
// that every replica agrees. Shared by ciba_requests and device_authorizations.
import type { Db } from '../db/db.js'
import type { CibaStatus, PolledRequest } from '../domain/types.js'
import type { PollRecord } from './polling.js'
import { toMs, ts } from './columns.postgres.js'

/** The columns every polled table has (PolledRequest). */
export interface PolledRow {
  id: string
  client_id: string
  requested_scopes: string[]
  status: CibaStatus
  approved_scopes: string[] | null
  auth_time: Date | string | null
  interval_seconds: number
  last_polled_at: Date | string | null
  family_id: string
  created_at: Date | string
  expires_at: Date | string
  decided_at: Date | string | null
  consumed_at: Date | string | null
}

const optMs = (v: Date | string | null) => (v === null ? undefined : toMs(v))

export function toPolledRequest(r: PolledRow): PolledRequest {
  return {
    id: r.id,
    clientId: r.client_id,
    requestedScopes: r.requested_scopes,
    status: r.status,
    approvedScopes: r.approved_scopes ?? undefined,
    authTime: optMs(r.auth_time),
    intervalSeconds: Number(r.interval_seconds),
    lastPolledAt: optMs(r.last_polled_at),
    familyId: r.family_id,
    createdAt: toMs(r.created_at),
    expiresAt: toMs(r.expires_at),
    decidedAt: optMs(r.decided_at),
    consumedAt: optMs(r.consumed_at),
  }
}

export type PolledTable = 'ciba_requests' | 'device_authorizations'

/** Redeems an approved, unexpired, unredeemed request: one statement, so of concurrent redemptions one wins. */
export async function consumePolled<R extends PolledRow>(db: Db, table: PolledTable, id: string, now: number): Promise<R | undefined> {
  const { rows } = await db.query<R>(
    `UPDATE ${table} SET consumed_at = $2::timestamptz
     WHERE id = $1 AND status = 'approved' AND consumed_at IS NULL AND expires_at > $2::timestamptz
     RETURNING *`,
    [id, ts(now)],
  )
  return rows[0]
}

export async function recordPoll(db: Db, table: PolledTable, id: string, now: number): Promise<PollRecord | undefined> {
  // The CTE locks the row (FOR UPDATE re-reads the newest version after a concurrent poll
  // commits), so `ok` is decided on the latest stamp: of two simultaneous polls one wins.
  // A refused poll keeps last_polled_at: the wait is measured from the last ACCEPTED poll.
  const { rows } = await db.query<{ ok: boolean; interval_seconds: number }>(
    `WITH cur AS (
       SELECT id, (last_polled_at IS NULL
                   OR last_polled_at + interval_seconds * interval '1 second' <= $2::timestamptz) AS ok
       FROM ${table} WHERE id = $1 FOR UPDATE)
     UPDATE ${table} r
     SET last_polled_at = CASE WHEN cur.ok THEN $2::timestamptz ELSE r.last_polled_at END,
         interval_seconds = CASE WHEN cur.ok THEN r.interval_seconds ELSE r.interval_seconds + 5 END
     FROM cur WHERE r.id = cur.id
     RETURNING cur.ok AS ok, r.interval_seconds AS interval_seconds`,
    [id, ts(now)],
  )
  const row = rows[0]
  return row && { accepted: row.ok === true, intervalSeconds: Number(row.interval_seconds) }
}
