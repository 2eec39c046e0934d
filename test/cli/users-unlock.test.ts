// authz users unlock, run in process against the test database: a locked-out user signs in again.
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CliError, createContext, UsageError } from '../../src/cli/context.js'
import { usersCommand } from '../../src/cli/users.js'
import { createManualClock } from '../../src/domain/clock.js'
import { createPasswordCheck } from '../../src/interaction/password-check.js'
import { createPgFailureCounterStore } from '../../src/stores/failure-counters.postgres.js'
import { createPgUserStore } from '../../src/stores/users.postgres.js'
import { hashPassword } from '../../src/interaction/passwords.js'
import { captureLogs } from '../helpers/app.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let authz: TestDb
const clock = createManualClock()
beforeAll(async () => {
  authz = await createTestDb()
  const passwordHash = await hashPassword('alice-pw')
  await createPgUserStore(authz.db).upsert({
    subjectId: 'u-alice',
    username: 'alice',
    passwordHash,
    enabled: true,
    claims: {},
    cibaUserCodeHash: undefined,
  })
})
afterAll(() => authz.close())

async function run(args: string[]) {
  const out: string[] = []
  const ctx = createContext({ out: (l) => out.push(l), err: () => {}, stdin: new PassThrough(), clock }, {}, { db: authz.db })
  await usersCommand.run(args, ctx)
  return out
}

describe('authz users unlock', () => {
  it('ends a lockout at once, and says when there was nothing to clear', async () => {
    const check = createPasswordCheck({
      users: createPgUserStore(authz.db),
      failures: createPgFailureCounterStore(authz.db),
      clock,
      logger: captureLogs({ logLevel: 'silent' }).logger,
      policy: { limit: 3, baseSeconds: 300, maxSeconds: 86_400 },
      usernameKey: Buffer.alloc(32),
    })
    const ctx = { address: '192.0.2.1' }
    for (let i = 0; i < 3; i++) await check.check('alice', 'nope', ctx)
    expect(await check.check('alice', 'alice-pw', ctx)).toMatchObject({ ok: false, reason: 'locked' })
    await createPgFailureCounterStore(authz.db).recordFailure(
      { kind: 'user_code', name: 'u-alice', source: 'bank' },
      { limit: 1, baseSeconds: 60, maxSeconds: 60 },
      clock.now(),
    )
    expect(await run(['unlock', 'alice'])).toEqual(['unlocked user "alice"'])
    const { rows } = await authz.db.query(`SELECT 1 FROM failure_counters WHERE name = 'u-alice'`)
    expect(rows).toHaveLength(0)
    expect(await check.check('alice', 'alice-pw', ctx)).toMatchObject({ ok: true })
    expect(await run(['unlock', 'alice'])).toEqual(['user "alice" had no failed attempts to clear'])
  })

  it('names an unknown user and wants exactly one USERNAME', async () => {
    await expect(run(['unlock', 'nobody'])).rejects.toThrow(new CliError('no user "nobody"'))
    await expect(run(['unlock'])).rejects.toBeInstanceOf(UsageError)
    await expect(run(['unlock', 'a', 'b'])).rejects.toBeInstanceOf(UsageError)
  })
})
