import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadMigrations, migrate, MigrationError, pendingMigrations } from '../../src/db/migrate.js'
import { createEmptyTestDb, createTestDb, type TestDb } from '../helpers/db.js'
import { testConfig } from '../helpers/app.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!()
})

async function emptyDb(): Promise<TestDb> {
  const authz = await createEmptyTestDb()
  cleanups.push(() => authz.close())
  return authz
}

async function migrationsDir(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'authz-migrations-'))
  for (const [name, sql] of Object.entries(files)) await writeFile(join(dir, name), sql)
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  return dir
}

describe('migrate', () => {
  it('applies every migration once, in order, recording a checksum', async () => {
    const { db } = await emptyDb()
    const all = await loadMigrations()
    expect(all.map((m) => m.version)).toEqual([...all.map((m) => m.version)].sort())
    expect(await migrate(db)).toEqual(all.map((m) => m.version))
    expect(await migrate(db)).toEqual([])
    const { rows } = await db.query<{ version: string; checksum: string }>(
      'SELECT version, checksum FROM schema_migrations ORDER BY version',
    )
    expect(rows).toEqual(all.map((m) => ({ version: m.version, checksum: m.checksum })))
    expect(await pendingMigrations(db)).toEqual([])
  })

  it('applies each migration exactly once when two runners start together', async () => {
    const { db } = await emptyDb()
    const dir = await migrationsDir({
      '0001_a.sql': 'CREATE TABLE a (id int); INSERT INTO a VALUES (1);',
      '0002_b.sql': 'CREATE TABLE b (id int); INSERT INTO b VALUES (2);',
    })
    const ms = await loadMigrations(dir)
    const [first, second] = await Promise.all([migrate(db, ms), migrate(db, ms)])
    expect([...first, ...second].sort()).toEqual(['0001', '0002'])
    // A second application would have failed on CREATE TABLE or doubled the rows.
    expect((await db.query('SELECT * FROM a')).rows).toEqual([{ id: 1 }])
    expect((await db.query('SELECT * FROM b')).rows).toEqual([{ id: 2 }])
  })

  it('stops on an applied migration whose file was changed', async () => {
    const { db } = await emptyDb()
    await migrate(db, await loadMigrations(await migrationsDir({ '0001_a.sql': 'CREATE TABLE a (id int);' })))
    const edited = await loadMigrations(await migrationsDir({ '0001_a.sql': 'CREATE TABLE a (id bigint);' }))
    await expect(migrate(db, edited)).rejects.toThrow(MigrationError)
    await expect(migrate(db, edited)).rejects.toThrow(/0001_a\.sql was changed after it was applied/)
    await expect(pendingMigrations(db, edited)).rejects.toThrow(/was changed/)
  })

  it('refuses a database migrated by a newer build', async () => {
    const { db } = await emptyDb()
    await migrate(db, await loadMigrations(await migrationsDir({ '0001_a.sql': 'SELECT 1;', '0002_b.sql': 'SELECT 2;' })))
    const older = await loadMigrations(await migrationsDir({ '0001_a.sql': 'SELECT 1;' }))
    await expect(migrate(db, older)).rejects.toThrow(/does not know \(0002\)/)
  })

  it('rolls a failing migration back whole and records nothing', async () => {
    const { db } = await emptyDb()
    const ms = await loadMigrations(await migrationsDir({ '0001_a.sql': 'CREATE TABLE a (id int); SELECT * FROM missing_table;' }))
    await expect(migrate(db, ms)).rejects.toThrow(/missing_table/)
    expect((await db.query(`SELECT to_regclass('a')::text AS t`)).rows).toEqual([{ t: null }])
    expect(await pendingMigrations(db, ms)).toEqual(['0001'])
  })
})

describe('readiness', () => {
  it('is ready only while the database answers and every migration is recorded', async () => {
    const authz = await createTestDb()
    cleanups.push(() => authz.close())
    const app = await buildApp({ config: testConfig({ LOG_LEVEL: 'silent' }), db: authz.db })
    cleanups.push(() => app.close())
    const ready = () => app.inject({ method: 'GET', url: '/health/ready' })

    expect((await ready()).json()).toEqual({ status: 'ready' })

    const { rows } = await authz.db.query<{ checksum: string }>(`DELETE FROM schema_migrations WHERE version = '0001' RETURNING checksum`)
    const missing = await ready()
    expect(missing.statusCode).toBe(503)
    expect(missing.json()).toEqual({ status: 'not_ready', reason: 'migrations not applied: 0001' })
    await authz.db.query(`INSERT INTO schema_migrations (version, name, checksum) VALUES ('0001', 'initial_schema', $1)`, [
      rows[0]!.checksum,
    ])
    expect((await ready()).statusCode).toBe(200)

    await authz.db.close()
    const down = await ready()
    expect(down.statusCode).toBe(503)
    expect(down.json()).toEqual({ status: 'not_ready', reason: 'database unavailable' })
  })
})

describe('data migrations', () => {
  // A name no account has may be a password typed into the username field: counters kept from
  // before names were stored as keyed digests must not keep it readable for the lockout period.
  it('0024 removes the failure counters that kept usernames no account has as typed, and nothing else', async () => {
    const { db } = await emptyDb()
    const all = await loadMigrations()
    await migrate(
      db,
      all.filter((m) => m.version < '0024'),
    )
    const row = (kind: string, name: string, source: string) =>
      db.query(
        `INSERT INTO failure_counters (kind, name, source, failures, blocks, expires_at) VALUES ($1, $2, $3, 1, 0, now() + interval '1 day')`,
        [kind, name, source],
      )
    await row('user', 'Password-In-Name-Field-1', 'unknown-username')
    await row('user', 'u-1001', '')
    await row('client', 'backend', '192.0.2.1')
    await row('user_code', 'u-1001', 'bank')
    await migrate(db, all)
    const { rows } = await db.query('SELECT kind, name, source FROM failure_counters ORDER BY kind, name')
    expect(rows).toEqual([
      { kind: 'client', name: 'backend', source: '192.0.2.1' },
      { kind: 'user', name: 'u-1001', source: '' },
      { kind: 'user_code', name: 'u-1001', source: 'bank' },
    ])
  })

  it('0032 keeps the sessions signed in before it, each last used at its sign-in, with no device', async () => {
    const { db } = await emptyDb()
    const all = await loadMigrations()
    await migrate(
      db,
      all.filter((m) => m.version < '0032'),
    )
    await db.query(`INSERT INTO users (subject_id, username, enabled, claims) VALUES ('u-1', 'alice', true, '{}')`)
    await db.query(
      `INSERT INTO user_sessions (id_hash, sid, subject_id, auth_time, amr, created_at, expires_at, ends_at)
       VALUES ('h', 's', 'u-1', '2026-11-01T10:00:00Z', '{pwd}', '2026-11-01T10:00:00Z', '2026-11-01T11:00:00Z', '2026-11-02T10:00:00Z')`,
    )
    await migrate(db, all)
    const { rows } = await db.query<{ sid: string; user_agent: string | null; last_used: string }>(
      `SELECT sid, user_agent, to_char(last_used_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI') AS last_used FROM user_sessions`,
    )
    expect(rows).toEqual([{ sid: 's', user_agent: null, last_used: '2026-11-01T10:00' }])
  })
})
