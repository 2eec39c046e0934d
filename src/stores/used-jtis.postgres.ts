// Replay protection for every one-time value the stores interface lists: one row per client (or
// key) and jti until the value expires. Recording is one statement, so two concurrent uses of the same
// jti yield exactly one success.
import type { Db } from '../db/db.js'
import type { UsedJtiStore } from './used-jtis.js'
import { deleteExpired, ts } from './columns.postgres.js'

export function createPgUsedJtiStore(db: Db): UsedJtiStore {
  return {
    async use(clientId, jti, expiresAt, now) {
      // A row that outlived its expiry (cleanup not run yet) does not block a new use.
      const { rows } = await db.query(
        `INSERT INTO used_jtis (client_id, jti, expires_at) VALUES ($1, $2, $3::timestamptz)
         ON CONFLICT (client_id, jti) DO UPDATE SET expires_at = EXCLUDED.expires_at
           WHERE used_jtis.expires_at <= $4::timestamptz
         RETURNING jti`,
        [clientId, jti, ts(expiresAt), ts(now)],
      )
      return rows.length === 1
    },
    removeExpired: (before, limit) => deleteExpired(db, 'used_jtis', 'client_id, jti', before, limit),
  }
}
