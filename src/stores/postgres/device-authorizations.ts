// RFC 8628 device authorization requests (table device_authorizations). Every state change is
// one statement; the poll throttle is shared with CIBA (polling.ts). Times come from the
// injected Clock as parameters; SQL now() is never used.
import type { Db } from '../../db/db.js'
import type { CibaStatus, DeviceAuthorization } from '../../domain/types.js'
import type { DeviceAuthorizationStore, DeviceDecision, NewDeviceAuthorization } from '../types.js'
import { deleteExpired, handleHash, ts } from './columns.js'
import { consumePolled, recordPoll, toPolledRequest, type PolledRow } from './polling.js'

interface DeviceRow extends PolledRow {
  subject_id: string | null
  amr: string[] | null
}

function toDeviceAuthorization(r: DeviceRow): DeviceAuthorization {
  return { ...toPolledRequest(r), subjectId: r.subject_id ?? undefined, amr: r.amr ?? undefined }
}

export function createPgDeviceAuthorizationStore(db: Db): DeviceAuthorizationStore {
  const one = async (sql: string, params: unknown[]) => {
    const { rows } = await db.query<DeviceRow>(sql, params)
    return rows[0] && toDeviceAuthorization(rows[0])
  }
  return {
    async create(r: NewDeviceAuthorization) {
      const { rowCount } = await db.query(
        `INSERT INTO device_authorizations (id, device_code_hash, user_code_hash, client_id, requested_scopes,
           interval_seconds, family_id, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::timestamptz, $9::timestamptz)
         ON CONFLICT (user_code_hash) DO NOTHING`,
        [r.id, handleHash(r.deviceCode), handleHash(r.userCode), r.clientId, r.requestedScopes, r.intervalSeconds,
          r.familyId, ts(r.createdAt), ts(r.expiresAt)],
      )
      return rowCount === 1
    },
    findByDeviceCode: (deviceCode) =>
      one('SELECT * FROM device_authorizations WHERE device_code_hash = $1', [handleHash(deviceCode)]),
    findByUserCode: (userCode) =>
      one('SELECT * FROM device_authorizations WHERE user_code_hash = $1', [handleHash(userCode)]),
    recordPoll: (id, now) => recordPoll(db, 'device_authorizations', id, now),
    decide(id, d: DeviceDecision, now) {
      const approved = d.status === 'approved'
      return one(
        `UPDATE device_authorizations
         SET status = $2, subject_id = $3, approved_scopes = $4, auth_time = $5::timestamptz, amr = $6,
             decided_at = $7::timestamptz
         WHERE id = $1 AND status = 'pending' AND expires_at > $7::timestamptz
         RETURNING *`,
        [id, d.status, approved ? d.subjectId : null, approved ? d.approvedScopes : null,
          approved ? ts(d.authTime) : null, approved ? d.amr : null, ts(now)],
      )
    },
    async consume(id, now) {
      const row = await consumePolled<DeviceRow>(db, 'device_authorizations', id, now)
      return row && toDeviceAuthorization(row)
    },
    removeExpired: (before, limit) => deleteExpired(db, 'device_authorizations', 'id', before, limit),
  }
}
