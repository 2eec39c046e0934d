// Passkeys (table passkeys, migrations/0041_passkeys.sql). A counter only moves forward in one
// statement, so two concurrent sign-ins with the same counter value record one use.
import type { Queryable } from '../db/db.js'
import type { Passkey, PasskeyStore } from './passkeys.js'
import { toMs, ts } from './columns.postgres.js'

interface PasskeyRow {
  credential_id: string
  subject_id: string
  public_key: Uint8Array
  counter: string | number
  transports: string[]
  backup_eligible: boolean
  backed_up: boolean
  aaguid: string
  name: string
  created_at: Date | string
  last_used_at: Date | string | null
}

const COLUMNS = `credential_id, subject_id, public_key, counter, transports, backup_eligible, backed_up, aaguid, name, created_at, last_used_at`

function toPasskey(r: PasskeyRow): Passkey {
  return {
    credentialId: r.credential_id,
    subjectId: r.subject_id,
    publicKey: new Uint8Array(r.public_key),
    counter: Number(r.counter),
    transports: r.transports,
    backupEligible: r.backup_eligible,
    backedUp: r.backed_up,
    aaguid: r.aaguid,
    name: r.name,
    createdAt: toMs(r.created_at),
    lastUsedAt: r.last_used_at === null ? undefined : toMs(r.last_used_at),
  }
}

export function createPgPasskeyStore(db: Queryable): PasskeyStore {
  return {
    async findById(credentialId) {
      const { rows } = await db.query<PasskeyRow>(`SELECT ${COLUMNS} FROM passkeys WHERE credential_id = $1`, [credentialId])
      return rows[0] && toPasskey(rows[0])
    },
    async listForSubject(subjectId) {
      const { rows } = await db.query<PasskeyRow>(
        `SELECT ${COLUMNS} FROM passkeys WHERE subject_id = $1 ORDER BY created_at, credential_id`,
        [subjectId],
      )
      return rows.map(toPasskey)
    },
    async add(p) {
      const { rows } = await db.query(
        `INSERT INTO passkeys (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::timestamptz, NULL)
         ON CONFLICT (credential_id) DO NOTHING RETURNING credential_id`,
        [
          p.credentialId,
          p.subjectId,
          Buffer.from(p.publicKey),
          p.counter,
          p.transports,
          p.backupEligible,
          p.backedUp,
          p.aaguid,
          p.name,
          ts(p.createdAt),
        ],
      )
      return rows.length === 1
    },
    async recordUse(credentialId, use) {
      const { rows } = await db.query(
        `UPDATE passkeys SET counter = $3, backed_up = $4, last_used_at = $5::timestamptz
         WHERE credential_id = $1 AND counter = $2 RETURNING credential_id`,
        [credentialId, use.previousCounter, use.counter, use.backedUp, ts(use.at)],
      )
      return rows.length === 1
    },
    async remove(subjectId, credentialId) {
      const { rows } = await db.query(`DELETE FROM passkeys WHERE subject_id = $1 AND credential_id = $2 RETURNING credential_id`, [
        subjectId,
        credentialId,
      ])
      return rows.length === 1
    },
    async removeAllForSubject(subjectId) {
      const { rows } = await db.query(`DELETE FROM passkeys WHERE subject_id = $1 RETURNING credential_id`, [subjectId])
      return rows.length
    },
  }
}
