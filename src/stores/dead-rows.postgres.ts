// What an UPDATE or DELETE of a secret leaves behind in PostgreSQL's files, and how it goes.
// PostgreSQL never overwrites a row: the old version stays, dead, in the table's file until
// vacuum reclaims its space (and its bytes linger in the page's free space even then), and the
// write-ahead log holds every version ever written. VACUUM FULL rewrites the table into a new
// file and empties the old one when it commits; but it copies a dead version that a transaction
// begun before the update may still read (a pg_dump, an autovacuum ANALYZE, a standby query
// reported through hot_standby_feedback), so on a server it first waits, a bounded time, for
// those to end. Its exclusive lock waits for every transaction that has touched the table, and
// every query of the table queues behind it meanwhile: it gives up after a short lock timeout
// rather than stall the server behind, say, a pg_dump.
// Embedded (PGlite in DATA_DIR), the write-ahead log is this database's alone: switching to a
// new segment and checkpointing leaves the earlier segments unneeded, and with wal_recycle off
// the checkpoint deletes them instead of renaming them, contents and all, for reuse. On a
// PostgreSQL server the log belongs to the whole cluster (archived, streamed to standbys,
// recycled on the server's schedule): no database user clears it, and the README says so.
import { PG_LOCK_NOT_AVAILABLE, pgErrorCode, type Db } from '../db/db.js'

/** The tables that hold secrets (private signing keys, server secrets). */
export type SecretTable = 'signing_keys' | 'server_secrets'

/** How long a purge waits for older transactions before it rewrites the table all the same. */
export const OLDER_TRANSACTIONS_WAIT_MS = 5_000
/** How long the rewrite may wait for its lock (other queries of the table queue behind it meanwhile). */
export const REWRITE_LOCK_WAIT_MS = 2_000
const POLL_MS = 100

/**
 * Rewrites `table` without the dead versions of its rows. Returns false when that may not have
 * happened: a transaction that may still read them had not ended within `waitMs` (some were
 * kept), or one holding a lock on the table kept the rewrite from starting.
 */
export async function purgeDeadRowVersions(db: Db, table: SecretTable, waitMs = OLDER_TRANSACTIONS_WAIT_MS): Promise<boolean> {
  if (db.kind === 'pglite') {
    // One backend: no other transaction exists. The checkpoint runs in this session, under this setting.
    await db.query(`VACUUM FULL ${table}`)
    await db.query('SET wal_recycle = off')
    try {
      await db.query('SELECT pg_switch_wal()')
      await db.query('CHECKPOINT')
    } finally {
      await db.query('RESET wal_recycle')
    }
    return true
  }
  const settled = await olderTransactionsEnded(db, waitMs)
  try {
    await db.query(`VACUUM FULL ${table}`, undefined, { lockTimeoutMs: REWRITE_LOCK_WAIT_MS })
  } catch (err) {
    if (pgErrorCode(err) === PG_LOCK_NOT_AVAILABLE) return false
    throw err
  }
  return settled
}

/**
 * Waits until no transaction that began before now can still see a version this call's caller
 * replaced: no transaction id older than now is still running anywhere on the server (VACUUM
 * FULL's own snapshot, and so its horizon, reaches back to the oldest one, whatever its database;
 * prepared transactions count among them), and no snapshot in this database nor a replication
 * slot predates now. Once true it stays true: ids only grow. Compared by age(), which orders
 * 32-bit xids across wraparound; pg_stat_activity shows backend_xmin to every role.
 */
async function olderTransactionsEnded(db: Db, waitMs: number): Promise<boolean> {
  const { rows } = await db.query<{ xid: string }>(
    `SELECT (pg_snapshot_xmax(pg_current_snapshot())::text::numeric % 4294967296)::text AS xid`,
  )
  const horizon = rows[0]!.xid
  const deadline = Date.now() + waitMs
  for (;;) {
    const { rows: older } = await db.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid()
                  AND backend_xmin IS NOT NULL AND age(backend_xmin) > age($1::xid))
            + (SELECT count(*) FROM pg_replication_slots WHERE xmin IS NOT NULL AND age(xmin) > age($1::xid))
            + (SELECT count(*) FROM (SELECT (pg_snapshot_xmin(pg_current_snapshot())::text::numeric % 4294967296)::text::xid AS xmin) s
                WHERE age(s.xmin) > age($1::xid)) AS n`,
      [horizon],
    )
    if (Number(older[0]!.n) === 0) return true
    if (Date.now() >= deadline) return false
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}
