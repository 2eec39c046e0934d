// Failed-attempt counters (migrations/0003_failure_counters.sql): password lockout, client
// authentication throttling, CIBA user_code throttling. Counting is one INSERT … ON CONFLICT DO
// UPDATE, which locks the row and sees its latest version, so concurrent failures on any replica
// are all counted and never pass the limit; a row past expires_at is treated as absent.
import type { Queryable } from '../db/db.js'
import type { FailureCounterStore, FailureKey, FailurePolicy, FailureRecord } from './failure-counters.js'
import { deleteExpired, ts } from './columns.postgres.js'

const NOW = '$4::timestamptz'
const FRESH = `c.expires_at <= ${NOW}`
const F = `(CASE WHEN ${FRESH} THEN 0 ELSE c.failures END)`
const B = `(CASE WHEN ${FRESH} THEN 0 ELSE c.blocks END)`
const HIT = `(${F} + 1 >= $5::integer)`
// base · 2^blocks, capped; the exponent is capped too, so power() never overflows.
const DUR = `make_interval(secs => least($7::double precision, $6::double precision * power(2::double precision, least(${B}, 30)::double precision)))`
const MAX = 'make_interval(secs => $7::double precision)'
const MS = (col: string) => `(extract(epoch FROM ${col}) * 1000)::bigint`

const RECORD_FAILURE = `
WITH up AS (
  INSERT INTO failure_counters AS c (kind, name, source, failures, blocks, blocked_until, expires_at)
  VALUES ($1, $2, $3, $8::integer, $9::integer, $10::timestamptz, $11::timestamptz)
  ON CONFLICT (kind, name, source) DO UPDATE SET
    failures = CASE WHEN ${HIT} THEN 0 ELSE ${F} + 1 END,
    blocks = CASE WHEN ${HIT} THEN ${B} + 1 ELSE ${B} END,
    blocked_until = CASE WHEN ${HIT} THEN ${NOW} + ${DUR} ELSE NULL END,
    expires_at = ${NOW} + CASE WHEN ${HIT} THEN ${DUR} ELSE interval '0' END + ${MAX}
  WHERE c.blocked_until IS NULL OR c.blocked_until <= ${NOW} OR ${FRESH}
  RETURNING failures, blocks, ${MS('blocked_until')} AS blocked_until_ms, true AS counted
)
SELECT * FROM up
UNION ALL
SELECT failures, blocks, ${MS('blocked_until')}, false FROM failure_counters
 WHERE kind = $1 AND name = $2 AND source = $3 AND NOT EXISTS (SELECT 1 FROM up)`

interface Row {
  failures: number
  blocks: number
  blocked_until_ms: string | number | null
  counted: boolean
}

/** The values of a first failure: with a limit of 1 it blocks at once. */
function firstFailure(policy: FailurePolicy, now: number) {
  if (policy.limit > 1) return [1, 0, null, ts(now + policy.maxSeconds * 1000)]
  const until = now + Math.min(policy.baseSeconds, policy.maxSeconds) * 1000
  return [0, 1, ts(until), ts(until + policy.maxSeconds * 1000)]
}

export function createPgFailureCounterStore(db: Queryable): FailureCounterStore {
  return {
    async recordFailure(key: FailureKey, policy: FailurePolicy, now: number): Promise<FailureRecord> {
      const { rows } = await db.query<Row>(RECORD_FAILURE, [
        key.kind,
        key.name,
        key.source,
        ts(now),
        policy.limit,
        policy.baseSeconds,
        policy.maxSeconds,
        ...firstFailure(policy, now),
      ])
      const row = rows[0]
      const blockedUntil = row?.blocked_until_ms == null ? undefined : Number(row.blocked_until_ms)
      // No row: a concurrent transaction created a blocking row after this statement's snapshot.
      if (!row || !row.counted) return { counted: false, blockedUntil }
      return { counted: true, failures: Number(row.failures), blocks: Number(row.blocks), blockedUntil }
    },
    async blockedUntil(key, now) {
      const { rows } = await db.query<{ ms: string | number }>(
        `SELECT ${MS('blocked_until')} AS ms FROM failure_counters
          WHERE kind = $1 AND name = $2 AND source = $3 AND blocked_until > $4::timestamptz`,
        [key.kind, key.name, key.source, ts(now)],
      )
      return rows[0] === undefined ? undefined : Number(rows[0].ms)
    },
    async forgive(key, counted, policy) {
      const startedBlock = counted.blockedUntil !== undefined
      await db.query(
        startedBlock
          ? `UPDATE failure_counters SET failures = $4::integer - 1, blocks = blocks - 1, blocked_until = NULL
              WHERE kind = $1 AND name = $2 AND source = $3 AND failures = 0 AND blocks = $5::integer
                AND ${MS('blocked_until')} = $6::bigint`
          : `UPDATE failure_counters SET failures = failures - 1
              WHERE kind = $1 AND name = $2 AND source = $3 AND failures > 0 AND blocked_until IS NULL`,
        startedBlock
          ? [key.kind, key.name, key.source, policy.limit, counted.blocks, counted.blockedUntil]
          : [key.kind, key.name, key.source],
      )
    },
    async clear(key) {
      const { rowCount } = await db.query('DELETE FROM failure_counters WHERE kind = $1 AND name = $2 AND source = $3', [
        key.kind,
        key.name,
        key.source,
      ])
      return rowCount > 0
    },
    async clearName(kinds, name) {
      const { rowCount } = await db.query('DELETE FROM failure_counters WHERE kind = ANY($1::text[]) AND name = $2', [kinds, name])
      return rowCount
    },
    async listBlocked(kind, now, limit) {
      const { rows } = await db.query<{ name: string; source: string; ms: string | number }>(
        `SELECT name, source, ${MS('blocked_until')} AS ms FROM failure_counters
          WHERE kind = $1 AND blocked_until > $2::timestamptz ORDER BY blocked_until DESC LIMIT $3`,
        [kind, ts(now), limit],
      )
      return rows.map((r) => ({ name: r.name, source: r.source, blockedUntil: Number(r.ms) }))
    },
    removeExpired: (before, limit) => deleteExpired(db, 'failure_counters', 'kind, name, source', before, limit),
  }
}
