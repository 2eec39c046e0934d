// Server-wide secrets (table server_secrets): created once by whichever replica asks first,
// then the same for every replica. Times come from the caller's clock.
import type { Queryable } from '../db/db.js'
import type { ServerSecretStore } from './server-secrets.js'
import { ts } from './columns.postgres.js'

export function createPgServerSecretStore(db: Queryable): ServerSecretStore {
  return {
    async ensure(name, candidate) {
      // Two statements, no transaction needed: the INSERT either stores ours or does nothing,
      // and the SELECT then reads whichever was stored first.
      await db.query(
        `INSERT INTO server_secrets (name, value, encrypted, created_at) VALUES ($1, $2, $3, $4::timestamptz)
         ON CONFLICT (name) DO NOTHING`,
        [name, candidate.value, candidate.encrypted, ts(candidate.createdAt)],
      )
      const { rows } = await db.query<{ value: string; encrypted: boolean }>('SELECT value, encrypted FROM server_secrets WHERE name = $1', [name])
      return rows[0]!
    },
    async storeEncrypted(name, encryptedValue) {
      await db.query('UPDATE server_secrets SET value = $2, encrypted = true WHERE name = $1 AND NOT encrypted', [name, encryptedValue])
    },
  }
}
