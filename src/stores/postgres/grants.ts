// persisted_grants: codes, refresh tokens, reference tokens, device codes and the jtis of JWT
// access tokens issued from a grant. Only handle hashes are stored (DESIGN.md data rules).
// Single use and family revocation are each one atomic SQL statement / transaction.
import type { Db, Queryable } from '../../db/db.js'
import type { GrantKind, PersistedGrant } from '../../domain/types.js'
import { handleHash } from '../../tokens/handles.js'
import type { GrantStore } from '../types.js'
import { REVOCATIONS_CHANNEL, revocationPayload } from './revocations.js'

interface GrantRow {
  handle_hash: string
  kind: GrantKind
  client_id: string
  subject_id: string | null
  family_id: string
  data: Record<string, unknown> | string
  created_at: Date
  expires_at: Date | null
  consumed_at: Date | null
}

function toGrant(r: GrantRow): PersistedGrant {
  return {
    handleHash: r.handle_hash,
    kind: r.kind,
    clientId: r.client_id,
    subjectId: r.subject_id ?? undefined,
    familyId: r.family_id,
    data: typeof r.data === 'string' ? (JSON.parse(r.data) as Record<string, unknown>) : r.data,
    createdAt: new Date(r.created_at).getTime(),
    expiresAt: r.expires_at ? new Date(r.expires_at).getTime() : undefined,
    consumedAt: r.consumed_at ? new Date(r.consumed_at).getTime() : undefined,
  }
}

const ts = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString())

/** Deletes a family's rows and records each JWT access token's jti as revoked, telling every replica. */
async function revokeFamilyIn(tx: Queryable, familyId: string, at: number): Promise<number> {
  const { rows } = await tx.query<GrantRow>('DELETE FROM persisted_grants WHERE family_id = $1 RETURNING *', [familyId])
  for (const r of rows) {
    const jti = r.kind === 'jwt_access_token' ? toGrant(r).data.jti : undefined
    if (typeof jti !== 'string' || !r.expires_at || new Date(r.expires_at).getTime() <= at) continue
    const expiresAt = new Date(r.expires_at).getTime()
    await tx.query(
      `INSERT INTO revoked_tokens (jti, client_id, expires_at, revoked_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (jti) DO NOTHING`,
      [jti, r.client_id, ts(expiresAt), ts(at)],
    )
    await tx.query('SELECT pg_notify($1, $2)', [REVOCATIONS_CHANNEL, revocationPayload(jti, expiresAt)])
  }
  return rows.length
}

export function createPgGrantStore(db: Db): GrantStore {
  return {
    async store(g) {
      await db.query(
        `INSERT INTO persisted_grants (handle_hash, kind, client_id, subject_id, family_id, data, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [handleHash(g.handle), g.kind, g.clientId, g.subjectId ?? null, g.familyId, JSON.stringify(g.data), ts(g.createdAt), ts(g.expiresAt)],
      )
    },
    async find(handle, kind) {
      const { rows } = kind
        ? await db.query<GrantRow>('SELECT * FROM persisted_grants WHERE handle_hash = $1 AND kind = $2', [handleHash(handle), kind])
        : await db.query<GrantRow>('SELECT * FROM persisted_grants WHERE handle_hash = $1', [handleHash(handle)])
      return rows[0] && toGrant(rows[0])
    },
    async consume(handle, kind, at) {
      const { rows } = await db.query<GrantRow>(
        `UPDATE persisted_grants SET consumed_at = $3
         WHERE handle_hash = $1 AND kind = $2 AND consumed_at IS NULL RETURNING *`,
        [handleHash(handle), kind, ts(at)],
      )
      return rows[0] && toGrant(rows[0])
    },
    async remove(handle, kind, clientId) {
      const { rowCount } = await db.query(
        'DELETE FROM persisted_grants WHERE handle_hash = $1 AND kind = $2 AND client_id = $3',
        [handleHash(handle), kind, clientId],
      )
      return rowCount > 0
    },
    revokeFamily(familyId, at) {
      return db.transaction((tx) => revokeFamilyIn(tx, familyId, at))
    },
    async removeExpired(before, limit) {
      const { rowCount } = await db.query(
        `DELETE FROM persisted_grants WHERE handle_hash IN (
           SELECT handle_hash FROM persisted_grants WHERE expires_at < $1 LIMIT $2)`,
        [ts(before), limit],
      )
      return rowCount
    },
  }
}
