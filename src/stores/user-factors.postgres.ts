// Second factors (tables user_totp and user_recovery_codes, migrations/0040_second_factors.sql).
// Every single use is one statement: of two concurrent uses of a code exactly one succeeds.
import type { Queryable } from '../db/db.js'
import { toMs, ts } from './columns.postgres.js'
import type { StoredFactors, UserFactorStore } from './user-factors.js'

interface FactorRow {
  secret: string | null
  confirmed_at: Date | string | null
  last_used_at: Date | string | null
  pending_secret: string | null
  pending_created_at: Date | string | null
  codes_left: number
}

function toFactors(r: FactorRow): StoredFactors {
  return {
    totp:
      r.secret === null || r.confirmed_at === null
        ? undefined
        : { secret: r.secret, confirmedAt: toMs(r.confirmed_at), lastUsedAt: r.last_used_at === null ? undefined : toMs(r.last_used_at) },
    pending:
      r.pending_secret === null || r.pending_created_at === null
        ? undefined
        : { secret: r.pending_secret, createdAt: toMs(r.pending_created_at) },
    recoveryCodesLeft: r.codes_left,
  }
}

/** Inserts the codes of `subject` (an SQL expression) at $now: used inside the statements below. */
const insertCodes = (subject: string, hashes: string, now: string) =>
  `INSERT INTO user_recovery_codes (subject_id, code_hash, created_at) SELECT ${subject}, h, ${now}::timestamptz FROM unnest(${hashes}::text[]) AS h`

export function createPgUserFactorStore(db: Queryable): UserFactorStore {
  return {
    async find(subjectId) {
      const { rows } = await db.query<FactorRow>(
        `SELECT t.secret, t.confirmed_at, t.last_used_at, t.pending_secret, t.pending_created_at,
           (SELECT count(*) FROM user_recovery_codes c WHERE c.subject_id = t.subject_id AND c.used_at IS NULL)::int AS codes_left
         FROM user_totp t WHERE t.subject_id = $1`,
        [subjectId],
      )
      return rows[0] && toFactors(rows[0])
    },
    async hasFactor(subjectId) {
      const { rows } = await db.query('SELECT 1 FROM user_totp WHERE subject_id = $1 AND confirmed_at IS NOT NULL', [subjectId])
      return rows.length > 0
    },
    async setPending(subjectId, secret, now) {
      await db.query(
        `INSERT INTO user_totp (subject_id, pending_secret, pending_created_at) VALUES ($1, $2, $3::timestamptz)
         ON CONFLICT (subject_id) DO UPDATE SET pending_secret = EXCLUDED.pending_secret, pending_created_at = EXCLUDED.pending_created_at`,
        [subjectId, secret, ts(now)],
      )
    },
    async confirm(subjectId, pendingSecret, step, codeHashes, now) {
      const { rows } = await db.query<{ n: number }>(
        `WITH t AS (
           UPDATE user_totp SET secret = pending_secret, confirmed_at = $4::timestamptz, last_used_step = $3, last_used_at = $4::timestamptz,
             pending_secret = NULL, pending_created_at = NULL
           WHERE subject_id = $1 AND pending_secret = $2 RETURNING subject_id),
         gone AS (DELETE FROM user_recovery_codes c USING t WHERE c.subject_id = t.subject_id),
         added AS (${insertCodes('(SELECT subject_id FROM t)', '$5', '$4')} WHERE EXISTS (SELECT 1 FROM t))
         SELECT count(*)::int AS n FROM t`,
        [subjectId, pendingSecret, step, ts(now), codeHashes],
      )
      return (rows[0]?.n ?? 0) === 1
    },
    async useStep(subjectId, step, now) {
      const { rowCount } = await db.query(
        `UPDATE user_totp SET last_used_step = $2, last_used_at = $3::timestamptz
          WHERE subject_id = $1 AND confirmed_at IS NOT NULL AND (last_used_step IS NULL OR last_used_step < $2)`,
        [subjectId, step, ts(now)],
      )
      return rowCount === 1
    },
    async useRecoveryCode(subjectId, codeHash, now) {
      const { rowCount } = await db.query(
        'UPDATE user_recovery_codes SET used_at = $3::timestamptz WHERE subject_id = $1 AND code_hash = $2 AND used_at IS NULL',
        [subjectId, codeHash, ts(now)],
      )
      return rowCount === 1
    },
    async replaceRecoveryCodes(subjectId, codeHashes, now) {
      const { rows } = await db.query<{ n: number }>(
        `WITH t AS (SELECT subject_id FROM user_totp WHERE subject_id = $1 AND confirmed_at IS NOT NULL),
         gone AS (DELETE FROM user_recovery_codes c USING t WHERE c.subject_id = t.subject_id),
         added AS (${insertCodes('(SELECT subject_id FROM t)', '$2', '$3')} WHERE EXISTS (SELECT 1 FROM t))
         SELECT count(*)::int AS n FROM t`,
        [subjectId, codeHashes, ts(now)],
      )
      return (rows[0]?.n ?? 0) === 1
    },
    async remove(subjectId) {
      const { rows } = await db.query<{ n: number }>(
        `WITH t AS (DELETE FROM user_totp WHERE subject_id = $1 RETURNING 1),
         c AS (DELETE FROM user_recovery_codes WHERE subject_id = $1 RETURNING 1)
         SELECT ((SELECT count(*) FROM t) + (SELECT count(*) FROM c))::int AS n`,
        [subjectId],
      )
      return (rows[0]?.n ?? 0) > 0
    },
  }
}
