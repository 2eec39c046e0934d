// The embedded driver: PostgreSQL compiled to WebAssembly, in-process (DATABASE_URL unset).
// PGlite has one connection and runs every top-level query under its own transaction mutex,
// so a transaction never interleaves with another request's statements.
//
// Memory. The embedded server is the first thing every user runs, so what it keeps resident is
// held to a budget (docs/performance.md, "Memory"), by three choices made here:
// - shared_buffers is PostgreSQL's page cache, a segment of PGlite's WebAssembly memory that is
//   zero-filled and so resident in full: initdb's 128MB is sized for a server, not for tables of
//   tokens and sessions that fit in a few megabytes (EMBEDDED_SHARED_BUFFERS raises it).
// - initdb for an empty data directory runs in a child process: PGlite runs it in a second
//   in-memory instance and copies the result in, leaving hundreds of megabytes of garbage that
//   the process would keep; a child returns all of it to the system when it exits.
// - V8 compiles the PostgreSQL module with its baseline compiler only (Liftoff): the optimising
//   tier costs 65 MiB idle and hundreds at peak, tiering up hot functions under load. Node 24
//   takes the flag only on its command line (`node --liftoff-only`, as `npm start` and the image
//   run it; NODE_OPTIONS refuses it); Node 22 also takes it from setFlagsFromString below.
import { PGlite } from '@electric-sql/pglite'
import { execFile } from 'node:child_process'
import { access, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { restrictDataDir } from './data-dir.js'
import type { Db, Queryable } from './db.js'

export interface PgliteDbOptions {
  /** A directory to persist to; undefined keeps everything in memory. */
  dataDir?: string
  /** A dumped data directory (PGlite.dumpDataDir) to start from: tests start from a migrated template. */
  loadDataDir?: Blob | File
  /** PostgreSQL's shared_buffers, e.g. `16MB` (the default). */
  sharedBuffers?: string
}

export const DEFAULT_SHARED_BUFFERS = '16MB'

let liftoffOnly = false

export async function createPgliteDb(opts: PgliteDbOptions = {}): Promise<Db> {
  const { dataDir } = opts
  if (!liftoffOnly) {
    // For modules compiled from now on (PGlite's is compiled by the first create()); Node 24
    // ignores it here, having frozen its flags at start-up.
    setFlagsFromString('--liftoff-only')
    liftoffOnly = true
  }
  if (dataDir) {
    await mkdir(dataDir, { recursive: true, mode: 0o700 })
    if (!opts.loadDataDir && !(await exists(join(dataDir, 'PG_VERSION')))) await initdbInChild(dataDir)
  }
  const pg = await PGlite.create({
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${opts.sharedBuffers ?? DEFAULT_SHARED_BUFFERS}`],
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

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  )
}

/**
 * Creates the database cluster in the empty `dataDir` from a short-lived Node process, which
 * imports PGlite by the URL this process resolved (so it works from any working directory) and
 * exits once PGlite has written the files.
 */
async function initdbInChild(dataDir: string): Promise<void> {
  const pglite = import.meta.resolve('@electric-sql/pglite')
  const script = `const { PGlite } = await import(${JSON.stringify(pglite)}); await (await PGlite.create({ dataDir: process.argv[1] })).close()`
  await new Promise<void>((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', script, dataDir], { maxBuffer: 1 << 20 }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`creating the embedded database in ${dataDir} failed: ${stderr.trim() || err.message}`))
      else resolve()
    })
  })
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
