// Per-user lockout through the PasswordCheck seam, on a real database.
import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createManualClock } from '../../src/domain/clock.js'
import { createPasswordCheck, UNKNOWN_USERNAME, type PasswordCheck } from '../../src/interaction/password-check.js'
import { createPgFailureCounterStore } from '../../src/stores/failure-counters.postgres.js'
import { createPgUserStore } from '../../src/stores/users.postgres.js'
import { hashPassword, verifyPassword } from '../../src/interaction/passwords.js'
import { captureLogs } from '../helpers/app.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let authz: TestDb
let passwordHash: string
const clock = createManualClock()
const { logs, logger } = captureLogs({ logLevel: 'info' })
const policy = { limit: 10, baseSeconds: 300, maxSeconds: 86_400 }
const ctx = { address: '198.51.100.7', clientId: 'web-app' }
const USERNAME_KEY = Buffer.alloc(32, 7)
let n = 0

/** A fresh user and a PasswordCheck (or two: two replicas) counting their scrypt runs. */
async function setup(instances = 1) {
  const username = `user${++n}`
  await createPgUserStore(authz.db).upsert({
    subjectId: `sub-${n}`,
    username,
    passwordHash,
    enabled: true,
    claims: {},
    cibaUserCodeHash: undefined,
  })
  const scrypt = { runs: 0 }
  const make = (): PasswordCheck =>
    createPasswordCheck({
      users: createPgUserStore(authz.db),
      failures: createPgFailureCounterStore(authz.db),
      clock,
      logger,
      policy,
      usernameKey: USERNAME_KEY,
      verify: (p, h) => (scrypt.runs++, verifyPassword(p, h)),
    })
  return { username, scrypt, checks: Array.from({ length: instances }, make) }
}

async function failTimes(check: PasswordCheck, username: string, times: number) {
  for (let i = 0; i < times; i++)
    expect(await check.check(username, `wrong-${i}`, ctx)).toMatchObject({ ok: false, reason: 'bad_password' })
}

beforeAll(async () => {
  authz = await createTestDb()
  passwordHash = await hashPassword('right-password')
})
afterAll(() => authz.close())

describe('PasswordCheck lockout', () => {
  it('locks after 10 failures: the right password fails with locked at once, without scrypt, until the period ends; the next lock lasts twice as long', async () => {
    const {
      username,
      scrypt,
      checks: [check],
    } = await setup()
    await failTimes(check!, username, 10)
    expect(scrypt.runs).toBe(10)
    const started = performance.now()
    expect(await check!.check(username, 'right-password', ctx)).toMatchObject({ ok: false, reason: 'locked' })
    expect(performance.now() - started).toBeLessThan(1000)
    expect(scrypt.runs).toBe(10)

    clock.advance(299)
    expect(await check!.check(username, 'right-password', ctx)).toMatchObject({ ok: false, reason: 'locked' })
    clock.advance(1)
    // The lock is over; ten more failures in a row lock again, now for 600 s.
    await failTimes(check!, username, 10)
    clock.advance(599)
    expect(await check!.check(username, 'right-password', ctx)).toMatchObject({ ok: false, reason: 'locked' })
    expect(scrypt.runs).toBe(20)
    clock.advance(1)
    const ok = await check!.check(username, 'right-password', ctx)
    expect(ok).toMatchObject({ ok: true, user: { username } })
  })

  it('a success resets the count', async () => {
    const {
      username,
      checks: [check],
    } = await setup()
    await failTimes(check!, username, 9)
    expect((await check!.check(username, 'right-password', ctx)).ok).toBe(true)
    await failTimes(check!, username, 9)
    expect((await check!.check(username, 'right-password', ctx)).ok).toBe(true)
  })

  it('two instances on one database share the count', async () => {
    const {
      username,
      checks: [a, b],
    } = await setup(2)
    await failTimes(a!, username, 5)
    await failTimes(b!, username, 5)
    expect(await a!.check(username, 'right-password', ctx)).toMatchObject({ ok: false, reason: 'locked' })
    expect(await b!.check(username, 'right-password', ctx)).toMatchObject({ ok: false, reason: 'locked' })
  })

  it('concurrent guesses never run more than 10 password checks before the lock', async () => {
    for (let trial = 0; trial < 3; trial++) {
      const { username, scrypt, checks } = await setup(2)
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => checks[i % 2]!.check(username, `guess-${i}`, ctx)))
      expect(scrypt.runs).toBe(10)
      expect(results.filter((r) => !r.ok && r.reason === 'bad_password')).toHaveLength(10)
      expect(results.filter((r) => !r.ok && r.reason === 'locked')).toHaveLength(20)
    }
  })

  it('counts unknown usernames and disabled accounts like accounts, spends scrypt on each, and locks them after as many failures', async () => {
    const {
      scrypt,
      checks: [check],
    } = await setup()
    await createPgUserStore(authz.db).upsert({
      subjectId: 'off-1',
      username: 'off',
      passwordHash,
      enabled: false,
      claims: {},
      cibaUserCodeHash: undefined,
    })
    expect(await check!.check('nobody', 'x', ctx)).toEqual({ ok: false, reason: 'unknown_user' })
    expect(await check!.check('off', 'right-password', ctx)).toMatchObject({ ok: false, reason: 'disabled' })
    expect(scrypt.runs).toBe(2)
    const nobody = createHmac('sha256', USERNAME_KEY).update('nobody').digest('base64url')
    const { rows } = await authz.db.query(
      `SELECT kind, name, source, failures FROM failure_counters WHERE name IN ('off-1', $1) ORDER BY source`,
      [nobody],
    )
    expect(rows).toEqual([
      { kind: 'user', name: 'off-1', source: '', failures: 1 },
      { kind: 'user', name: nobody, source: UNKNOWN_USERNAME, failures: 1 },
    ])
    // A lock comes after the same number of failures whether the account exists or not, and
    // answers at once (no scrypt) either way: a lock tells nobody that a username is taken.
    for (let i = 1; i < 10; i++) {
      expect(await check!.check('nobody', `x-${i}`, ctx)).toEqual({ ok: false, reason: 'unknown_user' })
      expect(await check!.check('off', `x-${i}`, ctx)).toMatchObject({ ok: false, reason: 'disabled' })
    }
    expect(scrypt.runs).toBe(20)
    expect(await check!.check('nobody', 'x', ctx)).toEqual({ ok: false, reason: 'locked' })
    expect(await check!.check('off', 'right-password', ctx)).toMatchObject({ ok: false, reason: 'locked' })
    expect(scrypt.runs).toBe(20)
    // An account named like a counted unknown username has its own counter (by subject id).
    await createPgUserStore(authz.db).upsert({
      subjectId: 'sub-nobody',
      username: 'nobody',
      passwordHash,
      enabled: true,
      claims: {},
      cibaUserCodeHash: undefined,
    })
    expect(await check!.check('nobody', 'right-password', ctx)).toMatchObject({ ok: true, user: { subjectId: 'sub-nobody' } })
  })

  // The attack: a person types their password into the username field; kept as typed, it would
  // be readable in the audit log and in failure_counters for the lockout period.
  it('keeps and logs a username no account has only as HMAC-SHA256 under the server secret, never as typed', async () => {
    const {
      checks: [check],
    } = await setup()
    const typed = 'S3cret-Password-In-The-Name-Field'
    logs.length = 0
    expect(await check!.check(typed, 'x', ctx)).toEqual({ ok: false, reason: 'unknown_user' })
    const digest = createHmac('sha256', USERNAME_KEY).update(typed).digest('base64url')
    const { rows } = await authz.db.query(
      `SELECT kind, name, source, failures FROM failure_counters WHERE source = $1 AND name IN ($2, $3)`,
      [UNKNOWN_USERNAME, typed, digest],
    )
    expect(rows).toEqual([{ kind: 'user', name: digest, source: UNKNOWN_USERNAME, failures: 1 }])
    const lines = logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'sign-in failed')
    expect(lines).toEqual([
      expect.objectContaining({ level: 30, username_hash: digest, client_id: 'web-app', address: '198.51.100.7', reason: 'unknown_user' }),
    ])
    expect(lines[0]).not.toHaveProperty('username')
    expect(logs.join('\n')).not.toContain('S3cret-Password')
  })

  it('does not count an empty username, and still spends scrypt on it', async () => {
    const {
      scrypt,
      checks: [check],
    } = await setup()
    const before = await authz.db.query('SELECT count(*)::int AS n FROM failure_counters')
    expect(await check!.check('', 'x', ctx)).toEqual({ ok: false, reason: 'unknown_user' })
    expect(scrypt.runs).toBe(1)
    expect((await authz.db.query('SELECT count(*)::int AS n FROM failure_counters')).rows).toEqual(before.rows)
  })

  it('logs every failure with username, client and address, the lock with its end, and never the password', async () => {
    const {
      username,
      checks: [check],
    } = await setup()
    logs.length = 0
    await failTimes(check!, username, 10)
    await check!.check(username, 'right-password', ctx)
    const lines = logs.map((l) => JSON.parse(l) as Record<string, unknown>)
    const failures = lines.filter((l) => l.msg === 'sign-in failed')
    expect(failures).toHaveLength(11)
    expect(failures[0]).toMatchObject({ level: 30, username, client_id: 'web-app', address: '198.51.100.7', reason: 'bad_password' })
    expect(failures[10]).toMatchObject({ reason: 'locked', username })
    expect(lines.filter((l) => l.msg === 'account locked')).toEqual([
      expect.objectContaining({ level: 40, username, address: '198.51.100.7', lockouts: 1, locked_until: expect.any(String) }),
    ])
    expect(logs.join('\n')).not.toMatch(/wrong-|right-password/)
  })
})
