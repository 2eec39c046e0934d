// OpenID CIBA Core 1.0 poll-mode requests (table ciba_requests). Every state change is one
// statement, so concurrent polls and decisions resolve in the database, on every replica alike.
// Times are passed in from the injected Clock as parameters; SQL now() is never used.
import type { Db, Queryable } from '../db/db.js'
import type { BackchannelTokenDeliveryMode, CibaRequest } from '../domain/types.js'
import { notifyDeliveryQueued } from './ciba-deliveries.postgres.js'
import type { CibaCreateResult, CibaDecision, CibaRequestStore, NewCibaRequest } from './ciba-requests.js'
import { deleteExpired, handleHash, toMs, ts } from './columns.postgres.js'
import { consumePolled, recordPoll, toPolledRequest, type PolledRow } from './polling.postgres.js'

interface CibaRow extends PolledRow {
  subject_id: string
  resources: string[]
  acr_values: string[]
  tenant: string | null
  idp: string | null
  binding_message: string | null
  amr: string[] | null
  sign_in_idp: string | null
  delivery_mode: BackchannelTokenDeliveryMode
}

function toCibaRequest(r: CibaRow): CibaRequest {
  return {
    ...toPolledRequest(r),
    subjectId: r.subject_id,
    resources: r.resources,
    acrValues: r.acr_values,
    tenant: r.tenant ?? undefined,
    idp: r.idp ?? undefined,
    bindingMessage: r.binding_message ?? undefined,
    amr: r.amr ?? undefined,
    signInIdp: r.sign_in_idp ?? undefined,
    deliveryMode: r.delivery_mode,
  }
}

/** pg_advisory_xact_lock(class, key) key class of the pending cap and rate ("cibp"); two-int locks never meet one-bigint ones. */
const PENDING_LOCK_CLASS = 0x63696270

const CREATED: CibaCreateResult = Object.freeze({ kind: 'created' })

const insert = (q: Queryable, r: NewCibaRequest) =>
  q.query(
    `INSERT INTO ciba_requests (id, auth_req_id_hash, client_id, subject_id, requested_scopes, resources,
       acr_values, tenant, idp, binding_message, interval_seconds, family_id, created_at, expires_at, delivery_mode, delivery_secret)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::timestamptz, $14::timestamptz, $15, $16)`,
    [
      r.id,
      handleHash(r.authReqId),
      r.clientId,
      r.subjectId,
      r.requestedScopes,
      r.resources,
      r.acrValues,
      r.tenant ?? null,
      r.idp ?? null,
      r.bindingMessage ?? null,
      r.intervalSeconds,
      r.familyId,
      ts(r.createdAt),
      ts(r.expiresAt),
      r.deliveryMode ?? 'poll',
      r.deliverySecret ?? null,
    ],
  )

export function createPgCibaRequestStore(db: Db): CibaRequestStore {
  const one = async (sql: string, params: unknown[]) => {
    const { rows } = await db.query<CibaRow>(sql, params)
    return rows[0] && toCibaRequest(rows[0])
  }
  return {
    async create(r: NewCibaRequest) {
      await insert(db, r)
    },
    async createWithinLimit(r, limits, now) {
      if (limits.maxPending <= 0 && limits.maxPerWindow <= 0) {
        await insert(db, r)
        return CREATED
      }
      // Count and insert under a lock on (client, user): two concurrent requests cannot both see
      // one place left. The lock ends with the transaction.
      return db.transaction(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [PENDING_LOCK_CLASS, `${r.clientId}\n${r.subjectId}`])
        if (limits.maxPending > 0) {
          const { rows } = await tx.query<{ n: number | string }>(
            `SELECT count(*) AS n FROM ciba_requests
             WHERE subject_id = $1 AND client_id = $2 AND status = 'pending' AND expires_at > $3::timestamptz`,
            [r.subjectId, r.clientId, ts(now)],
          )
          if (Number(rows[0]?.n ?? 0) >= limits.maxPending) return { kind: 'pending' }
        }
        if (limits.maxPerWindow > 0) {
          // The maxPerWindow-th newest request of the window: while it is in the window, the window
          // is full; once it leaves, a place is free. Rows outlive the window (cleanup keeps them
          // CIBA_RETENTION_SECONDS past expiry), so every request of the window is counted.
          const { rows } = await tx.query<{ created_ms: number }>(
            `SELECT floor(extract(epoch FROM created_at) * 1000)::float8 AS created_ms FROM ciba_requests
             WHERE client_id = $1 AND subject_id = $2 AND created_at > $3::timestamptz
             ORDER BY created_at DESC OFFSET $4 LIMIT 1`,
            [r.clientId, r.subjectId, ts(now - limits.windowMs), limits.maxPerWindow - 1],
          )
          if (rows[0]) return { kind: 'rate', retryAt: Number(rows[0].created_ms) + limits.windowMs }
        }
        await insert(tx, r)
        return CREATED
      })
    },
    findByAuthReqId: (authReqId) => one('SELECT * FROM ciba_requests WHERE auth_req_id_hash = $1', [handleHash(authReqId)]),
    findById: (id) => one('SELECT * FROM ciba_requests WHERE id = $1', [id]),
    async listPending(now, limit) {
      const { rows } = await db.query<CibaRow>(
        `SELECT * FROM ciba_requests WHERE status = 'pending' AND expires_at > $1::timestamptz
         ORDER BY created_at LIMIT $2`,
        [ts(now), limit],
      )
      return rows.map(toCibaRequest)
    },
    async list(filter, now, limit) {
      const params: unknown[] = []
      const p = (v: unknown) => `$${params.push(v)}`
      const where: string[] = []
      if (filter.clientId !== undefined) where.push(`client_id = ${p(filter.clientId)}`)
      if (filter.subjectId !== undefined) where.push(`subject_id = ${p(filter.subjectId)}`)
      if (filter.status === 'pending') where.push(`status = 'pending' AND expires_at > ${p(ts(now))}::timestamptz`)
      else if (filter.status === 'expired') where.push(`status = 'pending' AND expires_at <= ${p(ts(now))}::timestamptz`)
      else if (filter.status !== undefined) where.push(`status = ${p(filter.status)}`)
      if (filter.after) where.push(`(created_at, id) > (${p(ts(filter.after.createdAt))}::timestamptz, ${p(filter.after.id)})`)
      const { rows } = await db.query<CibaRow>(
        `SELECT * FROM ciba_requests ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY created_at, id LIMIT ${p(limit)}`,
        params,
      )
      return rows.map(toCibaRequest)
    },
    recordPoll: (id, now) => recordPoll(db, 'ciba_requests', id, now),
    async decide(id, d: CibaDecision, now) {
      const approved = d.status === 'approved'
      // CIBA Core §10.2, §10.3: a ping or push request's delivery is queued by the statement that
      // decides it, so no decision is ever without its delivery. `kept` reads the sealed secret as
      // it was before this statement clears it on the request.
      const { rows } = await db.query<CibaRow & { queued: boolean }>(
        `WITH kept AS (SELECT id, delivery_secret FROM ciba_requests WHERE id = $1),
         decided AS (
           UPDATE ciba_requests
              SET status = $2, approved_scopes = $3, auth_time = $4::timestamptz, amr = $6, sign_in_idp = $7,
                  decided_at = $5::timestamptz, delivery_secret = NULL
            WHERE id = $1 AND status = 'pending' AND expires_at > $5::timestamptz
              AND (delivery_mode = 'poll' OR delivery_secret IS NOT NULL) -- its expiry not queued (queueExpired)
            RETURNING *),
         queued AS (
           INSERT INTO ciba_deliveries (request_id, client_id, mode, family_id, secret, created_at, next_attempt_at)
           SELECT d.id, d.client_id, d.delivery_mode, d.family_id, k.delivery_secret, $5::timestamptz, $5::timestamptz
             FROM decided d JOIN kept k USING (id)
            WHERE d.delivery_mode IN ('ping', 'push')
           RETURNING id)
         SELECT decided.*, EXISTS (SELECT 1 FROM queued) AS queued FROM decided`,
        [
          id,
          d.status,
          approved ? d.approvedScopes : null,
          approved ? ts(d.authTime) : null,
          ts(now),
          approved ? (d.amr ?? null) : null,
          approved ? (d.idp ?? null) : null,
        ],
      )
      const row = rows[0]
      if (row?.queued) await notifyDeliveryQueued(db)
      return row && toCibaRequest(row)
    },
    async queueExpired(now, limit) {
      // As decide does: `expired` reads the sealed secret before `cleared` erases it on the request.
      // Rows another replica is queueing (or deciding) are skipped, and the secret condition is
      // checked again on the locked row, so no request is queued twice.
      const { rows } = await db.query<{ n: number | string }>(
        `WITH expired AS (
           SELECT id, delivery_secret FROM ciba_requests
            WHERE status = 'pending' AND expires_at <= $1::timestamptz
              AND delivery_mode IN ('ping', 'push') AND delivery_secret IS NOT NULL
            ORDER BY expires_at LIMIT $2
            FOR UPDATE SKIP LOCKED),
         cleared AS (
           UPDATE ciba_requests r SET delivery_secret = NULL
             FROM expired e
            WHERE r.id = e.id AND r.status = 'pending' AND r.delivery_secret IS NOT NULL
            RETURNING r.id, r.client_id, r.delivery_mode, r.family_id),
         queued AS (
           INSERT INTO ciba_deliveries (request_id, client_id, mode, family_id, secret, created_at, next_attempt_at)
           SELECT c.id, c.client_id, c.delivery_mode, c.family_id, e.delivery_secret, $1::timestamptz, $1::timestamptz
             FROM cleared c JOIN expired e USING (id)
           RETURNING id)
         SELECT count(*) AS n FROM queued`,
        [ts(now), limit],
      )
      // No NOTIFY: the worker that queues them sends them in the same run.
      return Number(rows[0]?.n ?? 0)
    },
    async nextExpiry() {
      const { rows } = await db.query<{ at: Date | string | null }>(
        `SELECT min(expires_at) AS at FROM ciba_requests
          WHERE status = 'pending' AND delivery_mode IN ('ping', 'push') AND delivery_secret IS NOT NULL`,
      )
      const at = rows[0]?.at
      return at === null || at === undefined ? undefined : toMs(at)
    },
    async consume(id, now) {
      const row = await consumePolled<CibaRow>(db, 'ciba_requests', id, now)
      return row && toCibaRequest(row)
    },
    removeExpired: (before, limit) => deleteExpired(db, 'ciba_requests', 'id', before, limit),
  }
}
