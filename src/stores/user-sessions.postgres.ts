// Sign-in sessions (table user_sessions, migrations/0009_sessions.sql). Ending a session queues
// its back-channel logouts in the same statement (backchannel-logouts.ts). The cookie value is a
// 256-bit handle; only its SHA-256 is stored. expires_at is the idle deadline, moved forward by
// use() and never past ends_at, the absolute end.
import type { Queryable } from '../db/db.js'
import { USER_AGENT_MAX, type StoredSession, type UserSessionStore } from './user-sessions.js'
import { notifyQueued, queueLogoutsSql } from './backchannel-logouts.postgres.js'
import { deleteExpired, handleHash, toMs, ts } from './columns.postgres.js'

interface SessionRow {
  sid: string
  subject_id: string
  username: string
  auth_time: Date | string
  amr: string[]
  client_ids: string[]
  idp: string | null
  upstream_sub: string | null
  upstream_sid: string | null
  upstream_id_token: string | null
  created_at: Date | string
  expires_at: Date | string
  ends_at: Date | string
  user_agent: string | null
  last_used_at: Date | string
}

const RETURNING = `s.sid, s.subject_id, u.username, s.auth_time, s.amr, s.client_ids, s.idp, s.upstream_sub, s.upstream_sid,
  s.upstream_id_token, s.created_at, s.expires_at, s.ends_at, s.user_agent, s.last_used_at`

function toSession(r: SessionRow): StoredSession {
  return {
    sid: r.sid,
    subjectId: r.subject_id,
    username: r.username,
    authTime: toMs(r.auth_time),
    startedAt: toMs(r.created_at),
    amr: r.amr,
    clientIds: r.client_ids,
    ...(r.idp === null ? {} : { idp: r.idp }),
    ...(r.upstream_sub === null || r.upstream_id_token === null
      ? {}
      : { upstream: { sub: r.upstream_sub, sid: r.upstream_sid ?? undefined, idToken: r.upstream_id_token } }),
    expiresAt: toMs(r.expires_at),
    endsAt: toMs(r.ends_at),
    ...(r.user_agent === null ? {} : { userAgent: r.user_agent }),
    lastUsedAt: toMs(r.last_used_at),
  }
}

export function createPgUserSessionStore(db: Queryable): UserSessionStore {
  return {
    async create(s) {
      await db.query(
        `INSERT INTO user_sessions (id_hash, sid, subject_id, auth_time, amr, created_at, expires_at, ends_at,
           idp, upstream_sub, upstream_sid, upstream_id_token, user_agent, last_used_at)
         VALUES ($1, $2, $3, $4::timestamptz, $5::text[], $6::timestamptz, $7::timestamptz, $8::timestamptz, $9, $10, $11, $12, $13, $6::timestamptz)`,
        [
          handleHash(s.handle),
          s.sid,
          s.subjectId,
          ts(s.authTime),
          s.amr,
          ts(s.createdAt),
          ts(s.expiresAt),
          ts(s.endsAt),
          s.idp ?? null,
          s.upstream?.sub ?? null,
          s.upstream?.sid ?? null,
          s.upstream?.idToken ?? null,
          s.userAgent === undefined || s.userAgent === '' ? null : s.userAgent.slice(0, USER_AGENT_MAX),
        ],
      )
    },
    async use(handle, now, idleSeconds) {
      // One statement: alive (both deadlines), user enabled, idle deadline moved forward.
      const { rows } = await db.query<SessionRow>(
        `UPDATE user_sessions s
            SET expires_at = LEAST(s.ends_at, $2::timestamptz + $3::float8 * interval '1 second'), last_used_at = $2::timestamptz
           FROM users u
          WHERE s.id_hash = $1 AND u.subject_id = s.subject_id AND u.enabled
            AND s.expires_at > $2::timestamptz AND s.ends_at > $2::timestamptz
          RETURNING ${RETURNING}`,
        [handleHash(handle), ts(now), idleSeconds],
      )
      return rows[0] && toSession(rows[0])
    },
    async remove(handle, end) {
      const { rows } = await db.query<SessionRow & { queued: number }>(
        `WITH ended AS (
           DELETE FROM user_sessions s USING users u
            WHERE s.id_hash = $1 AND u.subject_id = s.subject_id
            RETURNING ${RETURNING}),
         queued AS (${queueLogoutsSql('ended', '$2', '$3')})
         SELECT ended.*, (SELECT count(*) FROM queued)::int AS queued FROM ended`,
        [handleHash(handle), end.reason, ts(end.at)],
      )
      await notifyQueued(db, rows[0]?.queued ?? 0)
      return rows[0] && toSession(rows[0])
    },
    async removeAllForSubject(subjectId, end, exceptSid) {
      const { rows } = await db.query<{ sessions: number; queued: number }>(
        `WITH ended AS (DELETE FROM user_sessions WHERE subject_id = $1 AND ($4::text IS NULL OR sid <> $4)
           RETURNING subject_id, sid, client_ids),
         queued AS (${queueLogoutsSql('ended', '$2', '$3')})
         SELECT (SELECT count(*) FROM ended)::int AS sessions, (SELECT count(*) FROM queued)::int AS queued`,
        [subjectId, end.reason, ts(end.at), exceptSid ?? null],
      )
      await notifyQueued(db, rows[0]?.queued ?? 0)
      return rows[0]?.sessions ?? 0
    },
    async listForSubject(subjectId, now) {
      const { rows } = await db.query<SessionRow>(
        `SELECT ${RETURNING} FROM user_sessions s JOIN users u ON u.subject_id = s.subject_id
          WHERE s.subject_id = $1 AND s.expires_at > $2::timestamptz AND s.ends_at > $2::timestamptz
          ORDER BY s.last_used_at DESC, s.sid`,
        [subjectId, ts(now)],
      )
      return rows.map(toSession)
    },
    async removeBySid(subjectId, sid, end) {
      const { rows } = await db.query<SessionRow & { queued: number }>(
        `WITH ended AS (
           DELETE FROM user_sessions s USING users u
            WHERE s.subject_id = $1 AND s.sid = $2 AND u.subject_id = s.subject_id
            RETURNING ${RETURNING}),
         queued AS (${queueLogoutsSql('ended', '$3', '$4')})
         SELECT ended.*, (SELECT count(*) FROM queued)::int AS queued FROM ended`,
        [subjectId, sid, end.reason, ts(end.at)],
      )
      await notifyQueued(db, rows[0]?.queued ?? 0)
      return rows[0] && toSession(rows[0])
    },
    async removeByUpstream(idp, who, end) {
      const { rows } = await db.query<{ sessions: number; queued: number }>(
        `WITH ended AS (DELETE FROM user_sessions WHERE idp = $1 AND ($2::text IS NULL OR upstream_sub = $2)
             AND ($3::text IS NULL OR upstream_sid = $3)
           RETURNING subject_id, sid, client_ids),
         queued AS (${queueLogoutsSql('ended', '$4', '$5')})
         SELECT (SELECT count(*) FROM ended)::int AS sessions, (SELECT count(*) FROM queued)::int AS queued`,
        [idp, who.sub ?? null, who.sid ?? null, end.reason, ts(end.at)],
      )
      await notifyQueued(db, rows[0]?.queued ?? 0)
      return rows[0]?.sessions ?? 0
    },
    async addClient(sid, clientId) {
      const { rowCount } = await db.query(
        `UPDATE user_sessions SET client_ids = CASE WHEN $2 = ANY (client_ids) THEN client_ids ELSE client_ids || $2::text END
          WHERE sid = $1`,
        [sid, clientId],
      )
      return rowCount === 1
    },
    async addMethods(sid, methods) {
      // Appends the methods the session lacks, in the given order (RFC 8176: amr lists every method used).
      const { rowCount } = await db.query(
        `UPDATE user_sessions SET amr = amr || ARRAY(SELECT m FROM unnest($2::text[]) WITH ORDINALITY AS t (m, i)
            WHERE NOT (m = ANY (amr)) ORDER BY i)
          WHERE sid = $1`,
        [sid, methods],
      )
      return rowCount === 1
    },
    removeExpired: (before, limit) => deleteExpired(db, 'user_sessions', 'id_hash', before, limit),
  }
}
