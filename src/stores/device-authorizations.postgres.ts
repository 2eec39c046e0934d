// RFC 8628 device authorization requests (table device_authorizations). Every state change is
// one statement; the poll throttle is shared with CIBA (polling.ts). Times come from the
// injected Clock as parameters; SQL now() is never used.
import type { Db, Queryable } from '../db/db.js'
import type { DeviceAuthorization } from '../domain/types.js'
import type { DeviceAuthorizationStore, DeviceCreateResult, DeviceDecision, NewDeviceAuthorization } from './device-authorizations.js'
import { deleteExpired, handleHash, toMs, ts } from './columns.postgres.js'
import { consumePolled, recordPoll, toPolledRequest, type PolledRow } from './polling.postgres.js'

interface DeviceRow extends PolledRow {
  subject_id: string | null
  amr: string[] | null
  idp: string | null
}

function toDeviceAuthorization(r: DeviceRow): DeviceAuthorization {
  return { ...toPolledRequest(r), subjectId: r.subject_id ?? undefined, amr: r.amr ?? undefined, idp: r.idp ?? undefined }
}

/** pg_advisory_xact_lock(class, key) key class of the pending cap ("devp"); two-int locks never meet one-bigint ones. */
const PENDING_LOCK_CLASS = 0x64657670

const CREATED = { kind: 'created' } as const
const CODE_TAKEN = { kind: 'code-taken' } as const

/** Inserts unless the user code is taken (false then). */
async function insert(q: Queryable, r: NewDeviceAuthorization): Promise<boolean> {
  const { rowCount } = await q.query(
    `INSERT INTO device_authorizations (id, device_code_hash, user_code_hash, client_id, requested_scopes,
       interval_seconds, family_id, created_at, expires_at, requester_address)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::timestamptz, $9::timestamptz, $10)
     ON CONFLICT (user_code_hash) DO NOTHING`,
    [
      r.id,
      handleHash(r.deviceCode),
      handleHash(r.userCode),
      r.clientId,
      r.requestedScopes,
      r.intervalSeconds,
      r.familyId,
      ts(r.createdAt),
      ts(r.expiresAt),
      r.requesterAddress ?? null,
    ],
  )
  return rowCount === 1
}

export function createPgDeviceAuthorizationStore(db: Db): DeviceAuthorizationStore {
  const one = async (sql: string, params: unknown[]) => {
    const { rows } = await db.query<DeviceRow>(sql, params)
    return rows[0] && toDeviceAuthorization(rows[0])
  }
  return {
    create: (r: NewDeviceAuthorization) => insert(db, r),
    async createWithinLimit(r, limits, now): Promise<DeviceCreateResult> {
      const perAddress = r.requesterAddress === undefined ? 0 : limits.perAddress
      if (limits.perClient <= 0 && perAddress <= 0) return (await insert(db, r)) ? CREATED : CODE_TAKEN
      // Count and insert under a lock on the client: two concurrent requests cannot both see one
      // place left (each count runs after the previous holder committed; the lock ends with the
      // transaction). Each count stops at its cap and reads only the client's pending rows
      // (device_authorizations_pending_idx; per address, device_authorizations_pending_address_idx),
      // so it costs at most that cap's index entries.
      return db.transaction(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [PENDING_LOCK_CLASS, r.clientId])
        const oldestIfFull = async (max: number, address: string | undefined): Promise<number | undefined> => {
          if (max <= 0) return undefined
          const { rows } = await tx.query<{ n: number | string; oldest: Date | string | null }>(
            `SELECT count(*) AS n, min(expires_at) AS oldest FROM (
               SELECT expires_at FROM device_authorizations
               WHERE client_id = $1 AND status = 'pending' AND expires_at > $2::timestamptz
                 ${address === undefined ? '' : 'AND requester_address = $4'}
               ORDER BY expires_at LIMIT $3) AS p`,
            address === undefined ? [r.clientId, ts(now), max] : [r.clientId, ts(now), max, address],
          )
          const row = rows[0]
          return row && Number(row.n) >= max && row.oldest !== null ? toMs(row.oldest) : undefined
        }
        // The address first: a full address is told so even when the client is full too, as the
        // client's cap may well be full because of that address.
        const byAddress = await oldestIfFull(perAddress, r.requesterAddress)
        if (byAddress !== undefined) return { kind: 'full', per: 'address', oldestExpiresAt: byAddress }
        const byClient = await oldestIfFull(limits.perClient, undefined)
        if (byClient !== undefined) return { kind: 'full', per: 'client', oldestExpiresAt: byClient }
        return (await insert(tx, r)) ? CREATED : CODE_TAKEN
      })
    },
    findByDeviceCode: (deviceCode) => one('SELECT * FROM device_authorizations WHERE device_code_hash = $1', [handleHash(deviceCode)]),
    findByUserCode: (userCode) => one('SELECT * FROM device_authorizations WHERE user_code_hash = $1', [handleHash(userCode)]),
    findByIdAndUserCode: (id, userCode) =>
      one('SELECT * FROM device_authorizations WHERE id = $1 AND user_code_hash = $2', [id, handleHash(userCode)]),
    recordPoll: (id, now) => recordPoll(db, 'device_authorizations', id, now),
    decide(id, d: DeviceDecision, now) {
      const approved = d.status === 'approved'
      return one(
        `UPDATE device_authorizations
         SET status = $2, subject_id = $3, approved_scopes = $4, auth_time = $5::timestamptz, amr = $6,
             idp = $8, decided_at = $7::timestamptz
         WHERE id = $1 AND status = 'pending' AND expires_at > $7::timestamptz
         RETURNING *`,
        [
          id,
          d.status,
          approved ? d.subjectId : null,
          approved ? d.approvedScopes : null,
          approved ? ts(d.authTime) : null,
          approved ? d.amr : null,
          ts(now),
          approved ? (d.idp ?? null) : null,
        ],
      )
    },
    async consume(id, now) {
      const row = await consumePolled<DeviceRow>(db, 'device_authorizations', id, now)
      return row && toDeviceAuthorization(row)
    },
    removeExpired: (before, limit) => deleteExpired(db, 'device_authorizations', 'id', before, limit),
  }
}
