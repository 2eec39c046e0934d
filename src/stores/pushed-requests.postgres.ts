// Pushed authorization requests (RFC 9126) and request objects held for their request_uri: keyed
// by the handle's SHA-256, so a database dump names no usable request_uri. Using one up is one
// statement, so of two concurrent code issuances from one request_uri exactly one succeeds.
import type { Db } from '../db/db.js'
import type { PushedRequest, PushedRequestStore } from './pushed-requests.js'
import { deleteExpired, handleHash, toMs, ts } from './columns.postgres.js'

interface PushedRequestRow {
  client_id: string
  params: Array<[string, string]>
  via_par: boolean
  signed: boolean
  expires_at: Date | string
  used_at: Date | string | null
}

const COLUMNS = 'client_id, params, via_par, signed, expires_at, used_at'

function toPushedRequest(r: PushedRequestRow): PushedRequest {
  return {
    clientId: r.client_id,
    params: r.params,
    viaPar: r.via_par,
    signed: r.signed,
    expiresAt: toMs(r.expires_at),
    usedAt: r.used_at === null ? undefined : toMs(r.used_at),
  }
}

export function createPgPushedRequestStore(db: Db): PushedRequestStore {
  return {
    async create(req) {
      await db.query(
        `INSERT INTO pushed_authorization_requests (handle_hash, client_id, params, via_par, signed, created_at, expires_at)
         VALUES ($1, $2, $3::jsonb, $4, $5, $6::timestamptz, $7::timestamptz)`,
        [handleHash(req.handle), req.clientId, JSON.stringify(req.params), req.viaPar, req.signed, ts(req.createdAt), ts(req.expiresAt)],
      )
    },
    async find(handle) {
      const { rows } = await db.query<PushedRequestRow>(`SELECT ${COLUMNS} FROM pushed_authorization_requests WHERE handle_hash = $1`, [
        handleHash(handle),
      ])
      return rows[0] && toPushedRequest(rows[0])
    },
    async open(handle, now, windowMs) {
      const { rows } = await db.query<PushedRequestRow>(
        `UPDATE pushed_authorization_requests
         SET opened_at = COALESCE(opened_at, $2::timestamptz),
             expires_at = CASE WHEN opened_at IS NULL AND expires_at > $2::timestamptz AND used_at IS NULL
                               THEN GREATEST(expires_at, $3::timestamptz) ELSE expires_at END
         WHERE handle_hash = $1
         RETURNING ${COLUMNS}`,
        [handleHash(handle), ts(now), ts(now + windowMs)],
      )
      return rows[0] && toPushedRequest(rows[0])
    },
    async use(handle, now) {
      const { rowCount } = await db.query(
        `UPDATE pushed_authorization_requests SET used_at = $2::timestamptz
         WHERE handle_hash = $1 AND used_at IS NULL AND expires_at > $2::timestamptz`,
        [handleHash(handle), ts(now)],
      )
      return rowCount === 1
    },
    removeExpired: (before, limit) => deleteExpired(db, 'pushed_authorization_requests', 'handle_hash', before, limit),
  }
}
