// `npm run bench:cleanup`: does the cleanup of expired rows keep up with issuance?
//
// (1) Backlog: BENCH_CLEANUP_ROWS expired reference-token rows, removed by one cleanup run with
//     the server's settings (src/jobs/cleanup.ts): rows deleted per second.
// (2) Sustained: a writer inserts expired reference-token rows at BENCH_ISSUANCE_RATE per second
//     (the worst case: everything issued is garbage at once) for BENCH_DURATION seconds while the
//     cleanup runs on its own schedule, every BENCH_CLEANUP_INTERVAL seconds (the server: 60);
//     the expired backlog is sampled every second. It keeps up when the backlog returns to about
//     zero after each run instead of growing.
//
// Environment: DATABASE_URL (unset: embedded PGlite in memory; set: a fresh database is created on
// that server and dropped afterwards), BENCH_CLEANUP_ROWS (200000), BENCH_ISSUANCE_RATE (7500,
// above the reference-token issuance measured by `npm run bench`, scenario b), BENCH_DURATION (60),
// BENCH_CLEANUP_INTERVAL (10).
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { Db } from '../src/db/db.js'
import { migrate } from '../src/db/migrate.js'
import { createPgDb } from '../src/db/pg.js'
import { createPgliteDb } from '../src/db/pglite.js'
import { systemClock } from '../src/domain/clock.js'
import { createCleanup } from '../src/jobs/cleanup.js'
import { createPgGrantStore } from '../src/stores/grants.postgres.js'

const num = (name: string, def: number) => {
  const v = Number(process.env[name] ?? def)
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number`)
  return v
}
const progress = (line: string) => process.stderr.write(`bench:cleanup: ${line}\n`)
const fmt = (n: number) => Math.round(n).toLocaleString('en-US')

async function openDb(): Promise<{ db: Db; mode: string; drop(): Promise<void> }> {
  const url = process.env.DATABASE_URL
  if (!url) {
    const db = await createPgliteDb()
    return { db, mode: 'embedded PGlite (in memory)', drop: () => db.close() }
  }
  const name = `authz_bench_cleanup_${randomBytes(6).toString('hex')}`
  const admin = async <R extends pg.QueryResultRow = Record<string, unknown>>(sql: string) => {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    try {
      return await c.query<R>(sql)
    } finally {
      await c.end()
    }
  }
  const version = (await admin<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version
  await admin(`CREATE DATABASE ${name}`)
  const u = new URL(url)
  u.pathname = `/${name}`
  const db = createPgDb({ connectionString: u.href, max: 4 })
  return {
    db,
    mode: `PostgreSQL ${version} (DATABASE_URL, fresh database)`,
    async drop() {
      await db.close()
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    },
  }
}

/** Rows shaped like the reference tokens the issuer stores (handle hash, family, a scope and audience). */
async function insertExpired(db: Db, tag: string, count: number, expiredAt: Date): Promise<void> {
  await db.query(
    `INSERT INTO persisted_grants (handle_hash, kind, client_id, subject_id, family_id, data, created_at, expires_at)
     SELECT encode(sha256(($1 || g)::bytea), 'base64'), 'reference_token', 'bench-client', NULL, md5($1 || g),
            '{"scope":"orders.read orders.write","aud":["orders-api"],"resources":["orders-api"],"claims":{"client_id":"bench-client"}}', $2, $2
     FROM generate_series(1, $3::int) g`,
    [tag, expiredAt.toISOString(), count],
  )
}

async function expiredCount(db: Db): Promise<number> {
  const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM persisted_grants WHERE expires_at < now()')
  return Number(rows[0]!.n)
}

async function main() {
  const rows = num('BENCH_CLEANUP_ROWS', 200_000)
  const rate = num('BENCH_ISSUANCE_RATE', 7500)
  const duration = num('BENCH_DURATION', 60)
  const interval = num('BENCH_CLEANUP_INTERVAL', 10)
  const { db, mode, drop } = await openDb()
  try {
    await migrate(db)
    const grants = createPgGrantStore(db)
    const quiet = { info: () => {}, warn: (o: unknown) => progress(`warn ${JSON.stringify(o)}`) }
    const tasks = [{ name: 'persistedGrants', remove: grants.removeExpired }]

    progress(`(1) inserting ${fmt(rows)} expired rows`)
    for (let done = 0; done < rows; done += 50_000)
      await insertExpired(db, `b${done}-`, Math.min(50_000, rows - done), new Date(Date.now() - 60_000))
    const backlogCleanup = createCleanup({ clock: systemClock, logger: quiet, tasks })
    const t0 = performance.now()
    const run = await backlogCleanup.run()
    const seconds = (performance.now() - t0) / 1000
    const removed = run.removed.persistedGrants ?? 0
    const left = await expiredCount(db)

    progress(`(2) ${fmt(rate)} rows/s for ${duration} s, cleanup every ${interval} s`)
    const cleanup = createCleanup({ clock: systemClock, logger: quiet, tasks, intervalMs: interval * 1000 })
    const removedBefore = removed
    let inserted = 0
    let tick = 0
    const samples: number[] = []
    const start = performance.now()
    cleanup.start()
    const writer = (async () => {
      // Every 100 ms, the rows due by then: the rate holds even when one insert runs late.
      while (performance.now() - start < duration * 1000) {
        const due = Math.floor(((performance.now() - start) / 1000) * rate) - inserted
        if (due > 0) {
          await insertExpired(db, `s${tick++}-`, due, new Date(Date.now() - 1000))
          inserted += due
        }
        await new Promise((r) => setTimeout(r, 100))
      }
    })()
    const sampler = (async () => {
      while (performance.now() - start < duration * 1000) {
        await new Promise((r) => setTimeout(r, 1000))
        samples.push(await expiredCount(db))
      }
    })()
    await Promise.all([writer, sampler])
    const elapsed = (performance.now() - start) / 1000
    await cleanup.stop()
    const endBacklog = await expiredCount(db)
    const deletedSustained = inserted - endBacklog

    const out = [
      `## Cleanup of expired rows`,
      '',
      `- Database: ${mode}; Node ${process.version}`,
      `- Command: \`${process.env.DATABASE_URL ? 'DATABASE_URL=… ' : ''}npm run -s bench:cleanup\` (BENCH_CLEANUP_ROWS=${rows}, BENCH_ISSUANCE_RATE=${rate}, BENCH_DURATION=${duration}, BENCH_CLEANUP_INTERVAL=${interval})`,
      '',
      '| measurement | value |',
      '|---|--:|',
      `| (1) backlog removed in one run | ${fmt(removed)} rows in ${seconds.toFixed(1)} s, **${fmt(removedBefore / seconds)} rows/s**; ${fmt(left)} left |`,
      `| (1) batch size reached | ${fmt(backlogCleanup.batchSizes().persistedGrants ?? 0)} rows |`,
      `| (2) issued (expired at once) | ${fmt(inserted)} rows, ${fmt(inserted / elapsed)} rows/s |`,
      `| (2) removed meanwhile | ${fmt(deletedSustained)} rows, ${fmt(deletedSustained / elapsed)} rows/s |`,
      `| (2) expired backlog, per second | max ${fmt(Math.max(...samples))}, at the end ${fmt(endBacklog)} (one interval of issuance: ${fmt(rate * interval)}) |`,
      `| before: fixed cap (20 batches of 500 per minute) | 167 rows/s |`,
    ]
    process.stdout.write(`${out.join('\n')}\n`)
  } finally {
    await drop()
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:cleanup failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
  process.exit(1)
})
