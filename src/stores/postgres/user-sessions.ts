// Sign-in sessions of the CIBA approval pages (table user_sessions). The cookie value is a
// 256-bit handle; only its SHA-256 is stored.
import type { Db } from '../../db/db.js'
import type { UserSessionStore } from '../types.js'
import { deleteExpired, handleHash, toMs, ts } from './columns.js'

export function createPgUserSessionStore(db: Db): UserSessionStore {
  return {
    async create(s) {
      await db.query(
        `INSERT INTO user_sessions (id_hash, subject_id, auth_time, created_at, expires_at)
         VALUES ($1, $2, $3::timestamptz, $4::timestamptz, $5::timestamptz)`,
        [handleHash(s.sessionId), s.subjectId, ts(s.authTime), ts(s.createdAt), ts(s.expiresAt)],
      )
    },
    async find(sessionId, now) {
      const { rows } = await db.query<{ subject_id: string; auth_time: Date | string; expires_at: Date | string }>(
        `SELECT subject_id, auth_time, expires_at FROM user_sessions
         WHERE id_hash = $1 AND expires_at > $2::timestamptz`,
        [handleHash(sessionId), ts(now)],
      )
      const r = rows[0]
      return r && { subjectId: r.subject_id, authTime: toMs(r.auth_time), expiresAt: toMs(r.expires_at) }
    },
    async remove(sessionId) {
      await db.query('DELETE FROM user_sessions WHERE id_hash = $1', [handleHash(sessionId)])
    },
    removeExpired: (before, limit) => deleteExpired(db, 'user_sessions', 'id_hash', before, limit),
  }
}
