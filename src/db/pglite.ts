// The embedded driver: PostgreSQL compiled to WebAssembly, in-process (DATABASE_URL unset).
// PGlite has one connection and runs every top-level query under its own transaction mutex,
// so a transaction never interleaves with another request's statements.
import { PGlite } from '@electric-sql/pglite'
import { mkdir } from 'node:fs/promises'
import { restrictDataDir } from './data-dir.js'
import type { Db, Queryable } from './db.js'

export interface PgliteDbOptions {
  /** A directory to persist to; undefined keeps everything in memory. */
  dataDir?: string
  /** A dumped data directory (PGlite.dumpDataDir) to start from: tests start from a migrated template. */
  loadDataDir?: Blob | File
}

export async function createPgliteDb(opts: PgliteDbOptions = {}): Promise<Db> {
  const { dataDir } = opts
  if (dataDir) await mkdir(dataDir, { recursive: true, mode: 0o700 })
  const pg = await PGlite.create({
    ...(dataDir ? { dataDir } : {}),
    ...(opts.loadDataDir ? { loadDataDir: opts.loadDataDir } : {}),
  })
  const db = wrapPglite(pg)
  if (!dataDir) return db
  // PGlite writes its files 0666: narrow them now and again once it has written its last.
  await restrictDataDir(dataDir)
  return {
    ...db,
    async close() {
      await db.close()
      await restrictDataDir(dataDir)
    },
  }
}

export function wrapPglite(pg: PGlite): Db & { pglite: PGlite } {
  const toQueryable = (q: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    async query(sql, params) {
      const res = await q.query(sql, params as unknown[] | undefined)
      return { rows: res.rows as never[], rowCount: Math.max(res.affectedRows ?? 0, res.rows.length) }
    },
    async exec(sql) {
      await q.exec(sql)
    },
  })
  const top = toQueryable(pg)
  return {
    kind: 'pglite',
    pglite: pg,
    query: top.query,
    exec: top.exec,
    transaction: (fn) => pg.transaction((tx) => fn(toQueryable(tx))),
    async listen(channel, handler) {
      const unlisten = await pg.listen(channel, (payload) => handler(payload))
      // Unsubscribing from a database that is already closed has nothing left to undo.
      return async () => {
        if (!pg.closed) await unlisten()
      }
    },
    async close() {
      if (!pg.closed) await pg.close()
    },
  }
}
