// Attack: a server first ran without KEY_ENCRYPTION_SECRET, so its private signing keys and its
// server secrets (CSRF, authorize) were written in plaintext. The operator then sets the secret
// and restarts. Whoever later copies the data (DATA_DIR, or the database's files on PostgreSQL)
// must not find the old private keys or secrets in it: not in the live rows, not in the dead row
// versions the update left behind, not in the write-ahead log. This test plays that attacker: it
// learns the old values from a copy taken before, then searches every file for them afterwards.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { Db } from '../../src/db/db.js'
import { createPgliteDb } from '../../src/db/pglite.js'
import { createManualClock } from '../../src/domain/clock.js'
import { loadServerSecret } from '../../src/keys/server-secrets.js'
import { createPgServerSecretStore } from '../../src/stores/server-secrets.postgres.js'
import { MAIN } from '../helpers/built.js'
import { createTestDataDir, createTestDb, usingServer, type TestDb } from '../helpers/db.js'
import { startServer, type ServerProcess } from '../helpers/server-process.js'

const SLOW = 180_000
const SECRET = 'a-key-encryption-secret-for-tests'
const dirs: string[] = []
let server: ServerProcess | undefined
let testDb: TestDb | undefined
afterEach(async () => {
  await server?.stop()
  await testDb?.close()
  server = testDb = undefined
})
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

/** Starts the server, waits until it listens, stops it with SIGTERM (a clean stop); returns its output. */
async function startAndStop(env: Record<string, string>, dataDir: string | undefined): Promise<string> {
  server = await startServer({ SHUTDOWN_DRAIN: '0', ...env }, MAIN, dataDir ? { dataDir } : {})
  expect((await fetch(`${server.baseUrl}/health/live`)).status).toBe(200) // up, its signal handlers too
  server.child.kill('SIGTERM')
  expect(await server.exited).toBe(0)
  const out = server.output()
  server = undefined
  return out
}

/** What a copy of the data taken now would give away: every private `d` and every server secret. */
async function plaintextSecrets(db: Db): Promise<Map<string, string>> {
  const found = new Map<string, string>()
  const keys = await db.query<{ kid: string; private_jwk: string }>('SELECT kid, private_jwk FROM signing_keys WHERE NOT encrypted')
  for (const k of keys.rows) found.set(`private key ${k.kid}`, (JSON.parse(k.private_jwk) as { d: string }).d)
  const secrets = await db.query<{ name: string; value: string }>('SELECT name, value FROM server_secrets WHERE NOT encrypted')
  for (const s of secrets.rows) found.set(`server secret ${s.name}`, s.value)
  return found
}

/** Which of `needles` occur in which file of the embedded DATA_DIR. */
async function searchDataDir(dir: string, needles: Map<string, string>): Promise<string[]> {
  const hits: string[] = []
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue
    const path = join(e.parentPath, e.name)
    const bytes = await readFile(path)
    for (const [what, value] of needles) if (bytes.includes(Buffer.from(value))) hits.push(`${what} in ${path.slice(dir.length)}`)
  }
  return hits
}

/**
 * Which of `needles` occur in which file of the database on the PostgreSQL server (its directory
 * under base/, read through the server: the files a copy of the database's storage holds). The
 * server's write-ahead log is the whole cluster's, outside what this database controls.
 */
async function searchDatabaseFiles(db: Db, needles: Map<string, string>): Promise<string[]> {
  await db.query('CHECKPOINT') // what the server holds in memory reaches its files within checkpoint_timeout anyway
  const { rows } = await db.query<{ path: string; bytes: Buffer | null }>(
    `SELECT path, pg_read_binary_file(path, 0, (pg_stat_file(path, true)).size, true) AS bytes
       FROM (SELECT 'base/' || oid AS dir FROM pg_database WHERE datname = current_database()) d,
            LATERAL (SELECT d.dir || '/' || f AS path FROM pg_ls_dir(d.dir) AS f) files`,
  )
  const hits: string[] = []
  for (const r of rows) {
    for (const [what, value] of needles) if (r.bytes?.includes(Buffer.from(value))) hits.push(`${what} in ${r.path}`)
  }
  return hits
}

describe('KEY_ENCRYPTION_SECRET set on data written without it', { timeout: SLOW }, () => {
  it('leaves no old plaintext private key or server secret in the data, so a copy of it cannot forge tokens or CSRF tokens', async () => {
    let dataDir: string | undefined
    if (usingServer()) {
      testDb = await createTestDb()
    } else {
      const dir = await mkdtemp(join(tmpdir(), 'authz-at-rest-'))
      dirs.push(dir)
      dataDir = await createTestDataDir(join(dir, 'data'))
    }
    const env = testDb?.env ?? {}

    // First run, no secret: the keys and secrets are written in plaintext. What a copy taken now gives:
    await startAndStop(env, dataDir)
    const readDb = async <T>(fn: (db: Db) => Promise<T>): Promise<T> => {
      if (testDb) return fn(testDb.db)
      const db = await createPgliteDb({ dataDir: dataDir! })
      try {
        return await fn(db)
      } finally {
        await db.close()
      }
    }
    const leaked = await readDb(plaintextSecrets)
    expect([...leaked.keys()].filter((w) => w.startsWith('private key')).length).toBe(2) // RS256, ES256
    expect([...leaked.keys()].filter((w) => w.startsWith('server secret')).sort()).toEqual([
      // On the embedded database the server serves the admin API to its CLI (src/admin/local-access.ts): the key of its ETags.
      ...(dataDir ? ['server secret admin-etag'] : []),
      'server secret authorize',
      'server secret csrf',
      'server secret dpop-nonce',
      'server secret federation-signout',
      'server secret passkey-challenge',
      'server secret username-hmac',
    ])
    // The search finds them while they are there (it would find them afterwards too).
    expect((dataDir ? await searchDataDir(dataDir, leaked) : await searchDatabaseFiles(testDb!.db, leaked)).length).toBeGreaterThanOrEqual(
      leaked.size,
    )

    // Second run, with the secret: the operator's fix.
    const out = await startAndStop({ ...env, KEY_ENCRYPTION_SECRET: SECRET }, dataDir)
    const hits = dataDir ? await searchDataDir(dataDir, leaked) : await searchDatabaseFiles(testDb!.db, leaked)
    expect(hits).toEqual([])
    expect(await readDb(plaintextSecrets)).toEqual(new Map())
    // The operator is told what happened.
    expect(out).toContain('"msg":"signing keys stored in plaintext are replaced by new keys encrypted with KEY_ENCRYPTION_SECRET')
    expect(out).toContain('"msg":"server secret stored in plaintext replaced by a new one encrypted with KEY_ENCRYPTION_SECRET"')
  })
})

// On a server, VACUUM FULL keeps a dead row version that a transaction begun before the update may
// still read: an autovacuum ANALYZE, a report, a pg_dump, whose repeatable-read snapshot sees the
// old secret. Attack: such a transaction happens to be open while the secret is replaced, and the
// plaintext survives the rewrite in the table's file, where a later copy of the files finds it.
describe.runIf(usingServer())('a transaction that can still read the plaintext secret', { timeout: SLOW }, () => {
  /**
   * A repeatable-read transaction, open until released, whose snapshot predates the replacement.
   * `lockingTable`: it has also read server_secrets, so it holds a lock on it (as pg_dump does).
   */
  function openReader(db: Db, lockingTable: boolean) {
    let release!: () => void
    let began!: () => void
    const released = new Promise<void>((r) => (release = r))
    const snapshotTaken = new Promise<void>((r) => (began = r))
    const done = db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ')
      await tx.query(lockingTable ? 'SELECT value FROM server_secrets' : 'SELECT 1')
      began()
      await released
    })
    return { snapshotTaken, release, done }
  }

  /** `db`, telling when a purge has taken its horizon (the moment it starts waiting for older transactions). */
  function watching(db: Db) {
    let taken!: () => void
    const horizonTaken = new Promise<void>((r) => (taken = r))
    const watched: Db = {
      ...db,
      async query(sql, params, opts) {
        const res = await db.query(sql, params, opts)
        if (sql.includes('pg_current_snapshot()')) taken()
        return res as never
      },
    }
    return { watched, horizonTaken }
  }

  function loader(db: Db, olderTransactionsWaitMs?: number) {
    const told: Array<[string, boolean]> = []
    const store = createPgServerSecretStore(db, olderTransactionsWaitMs === undefined ? {} : { olderTransactionsWaitMs })
    const load = (key: string | undefined) =>
      loadServerSecret(
        { store, clock: createManualClock(), keyEncryptionSecret: key, onReplaced: (name, purged) => told.push([name, purged]) },
        'csrf',
      )
    return { load, told }
  }

  it('is waited for before the table is rewritten, so the rewrite drops the old version', async () => {
    testDb = await createTestDb()
    const { watched, horizonTaken } = watching(testDb.db)
    const { load, told } = loader(watched)
    const old = (await load(undefined)).toString('base64url')
    const reader = openReader(testDb.db, false)
    await reader.snapshotTaken
    const replacing = load(SECRET)
    await Promise.race([horizonTaken, replacing]) // the purge waits now (or, not waiting, is done)
    reader.release()
    await reader.done
    await replacing
    expect(told).toEqual([['csrf', true]])
    expect(await searchDatabaseFiles(testDb.db, new Map([['server secret csrf', old]]))).toEqual([])
  })

  // VACUUM FULL keeps every version deleted after the oldest transaction still running anywhere on
  // the server began, whatever its database: its own snapshot cannot be older than that. Attack:
  // another application's database on the same server has a write in progress while the secret
  // is replaced; a purge that looked at this database alone copies the old version into the new file.
  it('waits for a write in progress in another database on the same server too', async () => {
    testDb = await createTestDb()
    const other = await createTestDb()
    try {
      let pollsSeen = 0
      let polling!: () => void
      const waiting = new Promise<void>((r) => (polling = r))
      const watched: Db = {
        ...testDb.db,
        async query(sql, params, opts) {
          const res = await testDb!.db.query(sql, params, opts)
          if (sql.includes('pg_stat_activity') && ++pollsSeen === 2) polling()
          return res as never
        },
      }
      const { load, told } = loader(watched)
      const old = (await load(undefined)).toString('base64url')
      let release!: () => void
      let began!: () => void
      const released = new Promise<void>((r) => (release = r))
      const writing = new Promise<void>((r) => (began = r))
      const writer = other.db.transaction(async (tx) => {
        await tx.query('SELECT pg_current_xact_id()') // a transaction id, as any write takes
        began()
        await released
      })
      await writing
      const replacing = load(SECRET)
      const first = await Promise.race([waiting.then(() => 'waited'), replacing.then(() => 'did not wait')])
      release()
      await writer
      await replacing
      expect(first).toBe('waited')
      expect(told).toEqual([['csrf', true]])
      expect(await searchDatabaseFiles(testDb.db, new Map([['server secret csrf', old]]))).toEqual([])
    } finally {
      await other.close()
    }
  })

  it('that outlasts the wait is reported, so the operator can rewrite the table once it has ended', async () => {
    testDb = await createTestDb()
    const { load, told } = loader(testDb.db, 200)
    const old = (await load(undefined)).toString('base64url')
    const reader = openReader(testDb.db, false)
    await reader.snapshotTaken
    await load(SECRET)
    expect(told).toEqual([['csrf', false]])
    expect(await searchDatabaseFiles(testDb.db, new Map([['server secret csrf', old]]))).toHaveLength(1) // kept for the reader
    reader.release()
    await reader.done
    // What the operator is told to do then: VACUUM FULL once the transaction has ended.
    await testDb.db.query('VACUUM FULL server_secrets')
    expect(await searchDatabaseFiles(testDb.db, new Map([['server secret csrf', old]]))).toEqual([])
  })

  it('that holds a lock on the table (a pg_dump) does not make every query of the table queue behind the rewrite', async () => {
    testDb = await createTestDb()
    const { load, told } = loader(testDb.db, 200)
    const old = (await load(undefined)).toString('base64url')
    const reader = openReader(testDb.db, true)
    await reader.snapshotTaken
    const fresh = await load(SECRET) // the rewrite gave up waiting for its lock: start-up goes on
    expect(told).toEqual([['csrf', false]])
    expect((await load(SECRET)).equals(fresh)).toBe(true) // and the table is readable
    reader.release()
    await reader.done
    await testDb.db.query('VACUUM FULL server_secrets')
    expect(await searchDatabaseFiles(testDb.db, new Map([['server secret csrf', old]]))).toEqual([])
  })
})
