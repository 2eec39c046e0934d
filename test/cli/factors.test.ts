// authz users factors and users reset-factors, as an operator runs them (dist/cli.js as a child
// process) for a person who lost their device: the listing, the reset (its audit event on stderr,
// the person's sessions ended, the factor and the recovery codes gone), and the answers for a
// user with nothing to list or remove, an unknown user and a missing USERNAME.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Db } from '../../src/db/db.js'
import { createPgliteDb } from '../../src/db/pglite.js'
import { createPgUserFactorStore } from '../../src/stores/user-factors.postgres.js'
import { createPgUserSessionStore } from '../../src/stores/user-sessions.postgres.js'
import { createTestDataDir, createTestDb, usingServer, type TestDb } from '../helpers/db.js'
import { runCli } from './run-cli.js'

const SLOW = 180_000
const SET_UP = Date.parse('2026-03-01T09:00:00.000Z')
const USED = Date.parse('2026-03-02T10:30:00.000Z')
let dir: string
let env: Record<string, string>
let testDb: TestDb | undefined

/** The database the CLI writes to, opened in this process while no CLI runs. */
async function withDb<T>(fn: (db: Db) => Promise<T>): Promise<T> {
  if (testDb) return fn(testDb.db)
  const db = await createPgliteDb({ dataDir: env.DATA_DIR })
  try {
    return await fn(db)
  } finally {
    await db.close()
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'authz-factors-'))
  if (usingServer()) {
    testDb = await createTestDb()
    env = { ...testDb.env }
  } else {
    env = { DATA_DIR: await createTestDataDir(join(dir, 'data')) }
  }
  const seed = join(dir, 'seed.json')
  await writeFile(
    seed,
    JSON.stringify({
      users: [
        { subjectId: 'u-alice', username: 'alice', password: 'alice-pw', claims: {} },
        { subjectId: 'u-bob', username: 'bob', password: 'bob-pw', claims: {} },
      ],
    }),
  )
  expect((await runCli(['seed', seed], { env })).code).toBe(0)
  // Alice set up one-time codes, used one, and spent one of her ten recovery codes; she has two sessions.
  await withDb(async (db) => {
    const factors = createPgUserFactorStore(db)
    await factors.setPending('u-alice', 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', SET_UP)
    const hashes = Array.from({ length: 10 }, (_, i) => `hash-${i}`)
    expect(await factors.confirm('u-alice', 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', 100, hashes, SET_UP)).toBe(true)
    expect(await factors.useStep('u-alice', 101, USED)).toBe(true)
    expect(await factors.useRecoveryCode('u-alice', 'hash-3', USED)).toBe(true)
    const sessions = createPgUserSessionStore(db)
    for (const n of [1, 2]) {
      await sessions.create({
        handle: `handle-${n}`,
        sid: `sid-${n}`,
        subjectId: 'u-alice',
        authTime: USED,
        amr: ['pwd', 'otp', 'mfa'],
        createdAt: USED,
        expiresAt: Date.now() + 3_600_000,
        endsAt: Date.now() + 3_600_000,
      })
    }
  })
}, SLOW)
afterAll(async () => {
  await testDb?.close()
  await rm(dir, { recursive: true, force: true })
})

const count = (sql: string) => withDb(async (db) => (await db.query<{ n: number }>(sql)).rows[0]!.n)

describe('authz users factors and reset-factors', () => {
  it('lists the factor, resets it with an audit event and ends the sessions, then says there is none', { timeout: SLOW }, async () => {
    expect(await runCli(['users', 'factors', 'alice'], { env })).toEqual({
      code: 0,
      stdout:
        'FACTOR                 SET UP                    LAST USED                 RECOVERY CODES LEFT\n' +
        'one-time codes (TOTP)  2026-03-01T09:00:00.000Z  2026-03-02T10:30:00.000Z  9\n',
      stderr: '',
    })

    const reset = await runCli(['users', 'reset-factors', 'alice'], { env })
    expect(reset.code).toBe(0)
    expect(reset.stdout).toBe('removed the second factors of user "alice" and ended 2 sessions\n')
    const events = reset.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(events).toEqual([expect.objectContaining({ event: 'factor.removed', username: 'alice', subject: 'u-alice', reason: 'admin' })])
    expect(reset.stderr).not.toContain('JBSWY3DP')
    expect(await count(`SELECT count(*)::int AS n FROM user_totp WHERE subject_id = 'u-alice'`)).toBe(0)
    expect(await count(`SELECT count(*)::int AS n FROM user_recovery_codes WHERE subject_id = 'u-alice'`)).toBe(0)
    expect(await count(`SELECT count(*)::int AS n FROM user_sessions WHERE subject_id = 'u-alice'`)).toBe(0)

    expect(await runCli(['users', 'factors', 'alice'], { env })).toEqual({
      code: 0,
      stdout: 'user "alice" has no second factor\n',
      stderr: '',
    })
    expect(await runCli(['users', 'reset-factors', 'alice'], { env })).toEqual({
      code: 0,
      stdout: 'user "alice" had no second factor\n',
      stderr: '',
    })
  })

  it('removes a passkey as well: a second factor where passkeys are offered', { timeout: SLOW }, async () => {
    await withDb((db) =>
      db.query(
        `INSERT INTO passkeys (credential_id, subject_id, public_key, counter, transports, backup_eligible, backed_up, aaguid, name, created_at)
         VALUES ('cred-bob', 'u-bob', '\\x00', 0, '{}', false, false, '00000000-0000-0000-0000-000000000000', 'Lost phone', $1)`,
        [new Date(SET_UP)],
      ),
    )
    expect(await runCli(['users', 'factors', 'bob'], { env })).toEqual({
      code: 0,
      stdout:
        'FACTOR                SET UP                    LAST USED  RECOVERY CODES LEFT\n' +
        'passkey "Lost phone"  2026-03-01T09:00:00.000Z  -          -\n',
      stderr: '',
    })
    const reset = await runCli(['users', 'reset-factors', 'bob'], { env })
    expect(reset.code).toBe(0)
    expect(reset.stdout).toBe('removed the second factors of user "bob" and ended 0 sessions\n')
    expect(await count(`SELECT count(*)::int AS n FROM passkeys WHERE subject_id = 'u-bob'`)).toBe(0)
  })

  it('names an unknown user and wants exactly one USERNAME', { timeout: SLOW }, async () => {
    expect(await runCli(['users', 'factors', 'nobody'], { env })).toEqual({
      code: 1,
      stdout: '',
      stderr: 'authz users: no user "nobody"\n',
    })
    expect(await runCli(['users', 'reset-factors', 'nobody'], { env })).toEqual({
      code: 1,
      stdout: '',
      stderr: 'authz users: no user "nobody"\n',
    })
    const missing = await runCli(['users', 'reset-factors'], { env })
    expect(missing.code).toBe(2)
    expect(missing.stdout).toBe('')
    expect(missing.stderr).toContain('authz users: expected exactly one USERNAME\n')
    expect(missing.stderr).toContain('authz users reset-factors USERNAME')
  })
})
