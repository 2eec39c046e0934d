// Server-wide secrets (table server_secrets): created once by whichever replica asks first,
// then the same for every replica. Times come from the caller's clock.
import type { Db } from '../db/db.js'
import { ts } from './columns.postgres.js'
import { purgeDeadRowVersions } from './dead-rows.postgres.js'
import type { ServerSecretStore, StoredServerSecret } from './server-secrets.js'

/** `olderTransactionsWaitMs`: how long a purge waits for transactions that may still read old versions. */
export function createPgServerSecretStore(db: Db, opts: { olderTransactionsWaitMs?: number } = {}): ServerSecretStore {
  const read = async (name: string) => {
    const { rows } = await db.query<StoredServerSecret>('SELECT value, encrypted FROM server_secrets WHERE name = $1', [name])
    return rows[0]!
  }
  return {
    async ensure(name, candidate) {
      // Two statements, no transaction needed: the INSERT either stores ours or does nothing,
      // and the SELECT then reads whichever was stored first.
      await db.query(
        `INSERT INTO server_secrets (name, value, encrypted, created_at) VALUES ($1, $2, $3, $4::timestamptz)
         ON CONFLICT (name) DO NOTHING`,
        [name, candidate.value, candidate.encrypted, ts(candidate.createdAt)],
      )
      return read(name)
    },
    async replacePlaintext(name, replacement) {
      // The same two-step pattern: one UPDATE wins, the SELECT reads the winner's.
      const { rowCount } = await db.query(
        `UPDATE server_secrets SET value = $2, encrypted = $3, created_at = $4::timestamptz WHERE name = $1 AND NOT encrypted`,
        [name, replacement.value, replacement.encrypted, ts(replacement.createdAt)],
      )
      return { stored: await read(name), replaced: rowCount === 1 }
    },
    purgeDeadRowVersions: () => purgeDeadRowVersions(db, 'server_secrets', opts.olderTransactionsWaitMs),
  }
}
