// The SQL of registered clients and initial access tokens (src/stores/client-registrations.ts).
// A registered client is a row of clients like any other (written by the seed writer's upsert, so
// that every column is written the same way), marked self_registered, with its row in
// client_registrations; deleting the client deletes the rest (ON DELETE CASCADE).
import type { Db } from '../db/db.js'
import { handleHash, ts } from './columns.postgres.js'
import type { ClientRegistrationStore, InitialAccessToken, Registration, RegistrationTokenStore } from './client-registrations.js'
import { createPgSeedWriter } from './seed.postgres.js'

interface RegistrationRow {
  client_id: string
  metadata: Record<string, unknown>
  created_at_ms: string
  last_used_at_ms: string
}

const SELECT_REGISTRATION = `SELECT client_id, metadata,
  (extract(epoch FROM created_at) * 1000)::bigint AS created_at_ms,
  (extract(epoch FROM last_used_at) * 1000)::bigint AS last_used_at_ms
  FROM client_registrations`

const toRegistration = (r: RegistrationRow): Registration => ({
  clientId: r.client_id,
  metadata: r.metadata,
  createdAt: Number(r.created_at_ms),
  lastUsedAt: Number(r.last_used_at_ms),
})

/** A use is written only when the last one recorded is older than this: one write an hour at most. */
const TOUCH_GRANULARITY = '1 hour'

export function createPgClientRegistrationStore(db: Db): ClientRegistrationStore {
  return {
    async create(client, registration) {
      await db.transaction(async (tx) => {
        await createPgSeedWriter(tx).upsertClient({ ...client, selfRegistered: 'registration' })
        await tx.query(
          `INSERT INTO client_registrations (client_id, access_token_hash, metadata, created_at, last_used_at)
           VALUES ($1, $2, $3::jsonb, $4, $4)`,
          [client.clientId, handleHash(registration.accessToken), JSON.stringify(registration.metadata), ts(registration.createdAt)],
        )
      })
    },
    async findByAccessToken(clientId, accessToken) {
      const { rows } = await db.query<RegistrationRow>(`${SELECT_REGISTRATION} WHERE client_id = $1 AND access_token_hash = $2`, [
        clientId,
        handleHash(accessToken),
      ])
      return rows[0] && toRegistration(rows[0])
    },
    async update(client, change) {
      return db.transaction(async (tx) => {
        // The rotation first: of two updates with the same token, only one finds it.
        const { rowCount } = await tx.query(
          `UPDATE client_registrations SET access_token_hash = $3, metadata = $4::jsonb
           WHERE client_id = $1 AND access_token_hash = $2`,
          [client.clientId, handleHash(change.previousToken), handleHash(change.accessToken), JSON.stringify(change.metadata)],
        )
        if (rowCount !== 1) return false
        const { secrets: _kept, ...rest } = client
        await createPgSeedWriter(tx).upsertClient({ ...rest, secrets: undefined, selfRegistered: 'registration' })
        return true
      })
    },
    async remove(clientId) {
      const { rowCount } = await db.query(`DELETE FROM clients WHERE client_id = $1 AND self_registered = 'registration'`, [clientId])
      return rowCount === 1
    },
    async touch(clientId, now) {
      await db.query(
        `UPDATE client_registrations SET last_used_at = $2
         WHERE client_id = $1 AND last_used_at < $2::timestamptz - interval '${TOUCH_GRANULARITY}'`,
        [clientId, ts(now)],
      )
    },
    async removeIdle(before, limit) {
      const { rowCount } = await db.query(
        `DELETE FROM clients WHERE self_registered = 'registration' AND client_id IN (
           SELECT client_id FROM client_registrations WHERE last_used_at < $1 ORDER BY last_used_at LIMIT $2)`,
        [ts(before), limit],
      )
      return rowCount ?? 0
    },
  }
}

interface TokenRow {
  id: string
  description: string | null
  created_at_ms: string
  expires_at_ms: string
  max_uses: number | null
  uses: number
  revoked_at_ms: string | null
}

const USABLE = 'token_hash = $1 AND revoked_at IS NULL AND expires_at > $2 AND (max_uses IS NULL OR uses < max_uses)'

export function createPgRegistrationTokenStore(db: Db): RegistrationTokenStore {
  return {
    async create(t) {
      await db.query(
        `INSERT INTO registration_tokens (id, token_hash, description, created_at, expires_at, max_uses)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [t.id, handleHash(t.token), t.description ?? null, ts(t.createdAt), ts(t.expiresAt), t.maxUses ?? null],
      )
    },
    async list(): Promise<InitialAccessToken[]> {
      const { rows } = await db.query<TokenRow>(
        `SELECT id, description, max_uses, uses,
           (extract(epoch FROM created_at) * 1000)::bigint AS created_at_ms,
           (extract(epoch FROM expires_at) * 1000)::bigint AS expires_at_ms,
           (extract(epoch FROM revoked_at) * 1000)::bigint AS revoked_at_ms
         FROM registration_tokens ORDER BY created_at, id`,
      )
      return rows.map((r) => ({
        id: r.id,
        description: r.description ?? undefined,
        createdAt: Number(r.created_at_ms),
        expiresAt: Number(r.expires_at_ms),
        maxUses: r.max_uses ?? undefined,
        uses: r.uses,
        revokedAt: r.revoked_at_ms === null ? undefined : Number(r.revoked_at_ms),
      }))
    },
    async revoke(id, now) {
      const { rowCount } = await db.query('UPDATE registration_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [
        id,
        ts(now),
      ])
      return rowCount === 1
    },
    async isUsable(token, now) {
      const { rows } = await db.query(`SELECT 1 FROM registration_tokens WHERE ${USABLE}`, [handleHash(token), ts(now)])
      return rows.length === 1
    },
    async use(token, now) {
      const { rowCount } = await db.query(`UPDATE registration_tokens SET uses = uses + 1 WHERE ${USABLE}`, [handleHash(token), ts(now)])
      return rowCount === 1
    },
  }
}
