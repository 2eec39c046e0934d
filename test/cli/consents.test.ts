// authz consents, as child processes against a real database (embedded, or the test server's
// when DATABASE_URL is set), like test/cli/commands.test.ts.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import type { Db } from '../../src/db/db.js'
import { createPgliteDb } from '../../src/db/pglite.js'
import { DEMO_SEED_FILE } from '../../src/seed/paths.js'
import { applySeed, applySeedFile } from '../../src/seed/apply.js'
import { createPgConsentStore } from '../../src/stores/consents.postgres.js'
import { createTestDataDir, createTestDb, usingServer, type TestDb } from '../helpers/db.js'
import { runCli } from './run-cli.js'

const SLOW = 180_000
const T0 = Date.UTC(2026, 0, 1)
let dir: string
let env: Record<string, string>
let testDb: TestDb | undefined

/** The database the CLI works on, opened in this process while no CLI child runs. */
async function withDb<T>(fn: (db: Db) => Promise<T>): Promise<T> {
  if (testDb) return fn(testDb.db)
  const tpl = inject('dbTemplate')
  if (tpl.kind !== 'pglite') throw new Error('unexpected template')
  const db = await createPgliteDb({ dataDir: env.DATA_DIR! })
  try {
    return await fn(db)
  } finally {
    await db.close()
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'authz-cli-consents-'))
  if (usingServer()) {
    testDb = await createTestDb()
    env = { ...testDb.env }
  } else {
    env = { DATA_DIR: await createTestDataDir(join(dir, 'data')) }
  }
  await withDb(async (db) => {
    await applySeedFile(db, DEMO_SEED_FILE)
    await applySeed(db, {
      users: [
        { subjectId: 'bob-0001', username: 'bob' },
        { subjectId: 'carol-0001', username: 'carol' },
      ],
    })
    const consents = createPgConsentStore(db)
    await consents.grant('alice-0001', 'demo-ciba', ['openid', 'profile'], T0)
    await consents.grant('alice-0001', 'demo-ciba', ['offline_access'], T0 + 60_000)
    await consents.grant('alice-0001', 'demo-backend', ['orders.read'], T0)
    await consents.grant('bob-0001', 'demo-ciba', ['openid'], T0)
  })
}, SLOW)
afterAll(async () => {
  await testDb?.close()
  await rm(dir, { recursive: true, force: true })
})

describe('authz consents', () => {
  it('lists, revokes one client, refuses what is not there, revokes the rest', { timeout: SLOW }, async () => {
    expect(await runCli(['consents', 'list', 'alice'], { env })).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        'CLIENT        GRANTED                   SCOPES',
        'demo-backend  2026-01-01T00:00:00.000Z  orders.read',
        'demo-ciba     2026-01-01T00:01:00.000Z  openid profile offline_access',
        '',
      ].join('\n'),
    })
    const json = await runCli(['consents', 'list', 'alice', '--json'], { env })
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout)).toEqual([
      { clientId: 'demo-backend', scopes: ['orders.read'], createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' },
      {
        clientId: 'demo-ciba',
        scopes: ['openid', 'profile', 'offline_access'],
        createdAt: '2026-01-01T00:00:00.000Z',
        updatedAt: '2026-01-01T00:01:00.000Z',
      },
    ])

    expect(await runCli(['consents', 'revoke', 'alice', 'demo-ciba'], { env })).toEqual({
      code: 0,
      stdout: 'revoked the consent of user "alice" for client "demo-ciba"\n',
      stderr: '',
    })
    expect(await runCli(['consents', 'revoke', 'alice', 'demo-ciba'], { env })).toEqual({
      code: 1,
      stdout: '',
      stderr: 'authz consents: user "alice" has no consent for client "demo-ciba"\n',
    })
    expect(await runCli(['consents', 'list', 'nobody'], { env })).toEqual({
      code: 1,
      stdout: '',
      stderr: 'authz consents: no user "nobody"\n',
    })
    expect(await runCli(['consents', 'revoke', 'alice'], { env })).toEqual({
      code: 0,
      stdout: 'revoked 1 consent(s) of user "alice"\n',
      stderr: '',
    })

    // Only alice's consents went.
    await withDb(async (db) => {
      const store = createPgConsentStore(db)
      expect(await store.list('alice-0001')).toEqual([])
      expect((await store.list('bob-0001')).map((c) => [c.clientId, c.scopes])).toEqual([['demo-ciba', ['openid']]])
    })
  })

  it('prints its usage and refuses bad arguments with exit 2, before opening the database', { timeout: SLOW }, async () => {
    // Each child costs a process start: a few, in parallel.
    const [help, noUser, extra] = await Promise.all([
      runCli(['consents', '--help']),
      runCli(['consents', 'list']),
      runCli(['consents', 'revoke', 'alice', 'demo-ciba', 'more']),
    ])
    expect(help).toMatchObject({ code: 0, stderr: '' })
    expect(help.stdout).toMatch(/^Usage: authz consents list USERNAME \[--json\]\n {7}authz consents revoke USERNAME \[CLIENT_ID\]\n/)
    expect(noUser).toMatchObject({ code: 2, stdout: '' })
    expect(noUser.stderr).toMatch(/^authz consents: expected exactly one USERNAME\n\nUsage: authz consents list/)
    expect(extra).toMatchObject({ code: 2, stdout: '' })
    expect(extra.stderr).toMatch(/^authz consents: expected USERNAME and at most one CLIENT_ID\n/)
  })
})
