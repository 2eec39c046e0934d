// Our server as production runs it: the compiled build (`npm start`'s command), pinned to the server
// CPU, seeded with bench/seed.json, on a fresh database: a temporary DATA_DIR for embedded PGlite,
// or a database created for this run on the DATABASE_URL server (dropped at the end).
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { Cleanup } from './cleanup.js'
import { spawnNode, waitForHttp, type Child, type Pinning } from './processes.js'

/** Server settings taken from the benchmark's own environment when set (docs/performance.md, "For production"). */
export const PASSED_THROUGH = ['DATABASE_POOL_SIZE', 'CLIENT_CACHE_TTL', 'ACCESS_TOKEN_LIFETIME', 'METRICS_PORT'] as const

export interface OurServer {
  child: Child
  url: string
  /** For the report header, e.g. "PostgreSQL 15.8 (DATABASE_URL)". */
  databaseMode: string
  /** Embedded: the data directory it runs on. */
  dataDir?: string
}

export interface OurServerOptions {
  root: string
  port: number
  pinning: Pinning
  databaseUrl: string | undefined
  /** When set, the server runs under `node --cpu-prof` and writes its profile here on exit. */
  cpuProfDir: string | undefined
  cleanup: Cleanup
  /** Embedded only: start on this data directory (kept) instead of a fresh temporary one. */
  dataDir?: string
  /** The key encryption secret (default: a random one): a restart on the same data needs the same. */
  keyEncryptionSecret?: string
}

/** Compiles unless dist/ is current (scripts/build.mjs --if-stale): the benchmark never measures a stale dist/. */
export function build(root: string): void {
  const res = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: root, encoding: 'utf8' })
  if (res.status !== 0) throw new Error(`the build failed:\n${res.stdout}${res.stderr}`)
}

/** A fresh database on the DATABASE_URL server, dropped by the cleanup; returns its URL and the version. */
async function createRunDatabase(databaseUrl: string, cleanup: Cleanup): Promise<{ url: string; version: string }> {
  const name = `authz_bench_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: databaseUrl })
  await admin.connect()
  try {
    const { rows } = await admin.query<{ server_version: string }>('SHOW server_version')
    await admin.query(`CREATE DATABASE ${name}`) // name is ours: [a-z0-9_] only
    cleanup.defer(`drop database ${name}`, async () => {
      const c = new pg.Client({ connectionString: databaseUrl })
      await c.connect()
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await c.end()
      }
    })
    const url = new URL(databaseUrl)
    url.pathname = `/${name}`
    return { url: url.toString(), version: rows[0]?.server_version ?? '?' }
  } finally {
    await admin.end()
  }
}

export async function startOurServer(opts: OurServerOptions): Promise<OurServer> {
  const { root, port, cleanup } = opts
  const url = `http://127.0.0.1:${port}`
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(port),
    HOST: '127.0.0.1',
    ISSUER: url,
    LOG_LEVEL: 'warn',
    ACCESS_TOKEN_SIGNING_ALG: 'ES256',
    SEED_FILE: join(root, 'bench', 'seed.json'),
    // As in production: keys encrypted at rest (decrypted once at start, no hot-path cost).
    KEY_ENCRYPTION_SECRET: opts.keyEncryptionSecret ?? randomBytes(24).toString('base64url'),
    // The load comes from one address (127.0.0.1) at ~20,000 req/s: the per-address request limit
    // (RATE_LIMIT_API, per replica) is off so that the run measures the server, not the limiter.
    // Client authentication throttling stays on: the scenarios only send valid secrets.
    RATE_LIMIT_API: '0',
  }
  // Tuning knobs a user may want to compare runs with; everything else is fixed above.
  for (const name of PASSED_THROUGH) if (process.env[name]) env[name] = process.env[name]
  let databaseMode: string
  if (opts.databaseUrl) {
    const db = await createRunDatabase(opts.databaseUrl, cleanup)
    env.DATABASE_URL = db.url
    databaseMode = `PostgreSQL ${db.version} (DATABASE_URL, fresh database per run)`
  } else if (opts.dataDir) {
    env.DATA_DIR = opts.dataDir
    databaseMode = 'embedded PGlite (existing DATA_DIR)'
  } else {
    const dataDir = await mkdtemp(join(tmpdir(), 'authz-bench-'))
    cleanup.defer(`remove ${dataDir}`, () => rm(dataDir, { recursive: true, force: true }))
    env.DATA_DIR = dataDir
    databaseMode = 'embedded PGlite (temporary DATA_DIR)'
  }
  const nodeArgs = [
    // As `npm start` and the image run it (src/db/pglite.ts, Dockerfile).
    '--liftoff-only',
    '--max-semi-space-size=4',
    '--heap-growing-percent=30',
    ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
    ...(opts.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProfDir] : []),
  ]
  const child = spawnNode('authz', [...nodeArgs, join(root, 'dist', 'main.js')], { cwd: root, env, pinning: opts.pinning })
  // Registered after the database steps, so it runs before them: stop the server, then drop.
  cleanup.defer('stop authz', () => child.stop())
  await waitForHttp(child, `${url}/health/ready`)
  return { child, url, databaseMode, ...(env.DATA_DIR ? { dataDir: env.DATA_DIR } : {}) }
}
