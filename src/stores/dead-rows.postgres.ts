// What an UPDATE or DELETE of a secret leaves behind in PostgreSQL's files, and how it goes.
// PostgreSQL never overwrites a row: the old version stays, dead, in the table's file until
// vacuum reclaims its space (and its bytes linger in the page's free space even then), and the
// write-ahead log holds every version ever written. VACUUM FULL rewrites the table into a new
// file and empties the old one when it commits.
// Embedded (PGlite in DATA_DIR), the write-ahead log is this database's alone: switching to a
// new segment and checkpointing leaves the earlier segments unneeded, and with wal_recycle off
// the checkpoint deletes them instead of renaming them, contents and all, for reuse. On a
// PostgreSQL server the log belongs to the whole cluster (archived, streamed to standbys,
// recycled on the server's schedule): no database user clears it, and the README says so.
import type { Db } from '../db/db.js'

/** The tables that hold secrets (private signing keys, server secrets). */
export type SecretTable = 'signing_keys' | 'server_secrets'

export async function purgeDeadRowVersions(db: Db, table: SecretTable): Promise<void> {
  await db.query(`VACUUM FULL ${table}`)
  if (db.kind !== 'pglite') return
  // PGlite is one backend: the checkpoint runs in this session, under this setting.
  await db.query('SET wal_recycle = off')
  try {
    await db.query('SELECT pg_switch_wal()')
    await db.query('CHECKPOINT')
  } finally {
    await db.query('RESET wal_recycle')
  }
}
