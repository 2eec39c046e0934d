// Expired rows the background cleanup (src/jobs/cleanup.ts) has not removed yet, per table,
// for the metrics. One statement; each count stops at COUNT_CAP, so that a scrape stays cheap by
// the expires_at indexes even when the cleanup has fallen far behind.
import type { Queryable } from '../db/db.js'
import { ts } from './columns.postgres.js'

/** Every table the cleanup removes expired rows from. */
export const EXPIRING_TABLES = [
  'ciba_requests',
  'device_authorizations',
  'persisted_grants',
  'grant_families',
  'revoked_tokens',
  'user_sessions',
  'used_jtis',
  'failure_counters',
  'backchannel_logouts',
] as const
export type ExpiringTable = (typeof EXPIRING_TABLES)[number]

export const COUNT_CAP = 100_000

export function createPgExpiredRowCounter(db: Queryable, retentionSeconds: Partial<Record<ExpiringTable, number>> = {}) {
  const params: unknown[] = []
  const parts = EXPIRING_TABLES.map((table, i) => {
    params.push(retentionSeconds[table] ?? 0)
    return `SELECT '${table}' AS name, (SELECT count(*) FROM (SELECT 1 FROM ${table}
      WHERE expires_at < $1::timestamptz - make_interval(secs => $${i + 2}::float8) LIMIT ${COUNT_CAP}) s)::int AS n`
  })
  const sql = parts.join('\nUNION ALL\n')
  return {
    /** Rows expired before `now` (ms), less each table's retention. */
    async count(now: number): Promise<Record<string, number>> {
      const { rows } = await db.query<{ name: string; n: number }>(sql, [ts(now), ...params])
      return Object.fromEntries(rows.map((r) => [r.name, r.n]))
    },
  }
}
