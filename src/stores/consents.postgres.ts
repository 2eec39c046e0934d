// Remembered consents (table consents): per user and client, the scopes granted, until revoked.
// Granting is one INSERT ... ON CONFLICT DO UPDATE, so concurrent grants for the same user and
// client merge: the row lock makes the second statement see the first one's scopes.
import type { Queryable } from '../db/db.js'
import type { Consent, ConsentStore } from './consents.js'
import { toMs, ts } from './columns.postgres.js'

interface ConsentRow {
  subject_id: string
  client_id: string
  scopes: string[]
  created_at: Date | string
  updated_at: Date | string
}

const COLUMNS = 'subject_id, client_id, scopes, created_at, updated_at'

function toConsent(r: ConsentRow): Consent {
  return {
    subjectId: r.subject_id,
    clientId: r.client_id,
    scopes: r.scopes,
    createdAt: toMs(r.created_at),
    updatedAt: toMs(r.updated_at),
  }
}

// The union keeps the stored order and appends the scopes not yet granted, in the order given.
const GRANT = `
  INSERT INTO consents (subject_id, client_id, scopes, created_at, updated_at)
  VALUES ($1, $2, $3::text[], $4::timestamptz, $4::timestamptz)
  ON CONFLICT (subject_id, client_id) DO UPDATE SET
    scopes = consents.scopes || ARRAY(
      SELECT s FROM unnest(EXCLUDED.scopes) WITH ORDINALITY AS n(s, i)
      WHERE NOT (s = ANY (consents.scopes)) ORDER BY i),
    updated_at = EXCLUDED.updated_at
  RETURNING ${COLUMNS}`

export function createPgConsentStore(db: Queryable): ConsentStore {
  return {
    async grant(subjectId, clientId, scopes, at) {
      const { rows } = await db.query<ConsentRow>(GRANT, [subjectId, clientId, [...new Set(scopes)], ts(at)])
      return toConsent(rows[0]!)
    },
    async find(subjectId, clientId) {
      const { rows } = await db.query<ConsentRow>(`SELECT ${COLUMNS} FROM consents WHERE subject_id = $1 AND client_id = $2`, [
        subjectId,
        clientId,
      ])
      return rows[0] && toConsent(rows[0])
    },
    async list(subjectId) {
      // COLLATE "C": the same order on every server, whatever its default collation.
      const { rows } = await db.query<ConsentRow>(`SELECT ${COLUMNS} FROM consents WHERE subject_id = $1 ORDER BY client_id COLLATE "C"`, [
        subjectId,
      ])
      return rows.map(toConsent)
    },
    async revoke(subjectId, clientId) {
      const { rowCount } =
        clientId === undefined
          ? await db.query('DELETE FROM consents WHERE subject_id = $1', [subjectId])
          : await db.query('DELETE FROM consents WHERE subject_id = $1 AND client_id = $2', [subjectId, clientId])
      return rowCount
    },
  }
}
