// Replay protection for CIBA request objects (CIBA Core §7.1.1: jti): one row per client and
// jti until the object expires. Recording is one statement, so two concurrent uses of the same
// jti yield exactly one success.
import type { Db } from '../../db/db.js'
import type { UsedJtiStore } from '../types.js'
import { ts } from './columns.js'

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
    async removeExpired(before, limit) {
      const { rowCount } = await db.query(
        `DELETE FROM used_jtis WHERE (client_id, jti) IN (
           SELECT client_id, jti FROM used_jtis WHERE expires_at < $1::timestamptz ORDER BY expires_at LIMIT $2)`,
        [ts(before), limit],
      )
      return rowCount
    },
  }
}
