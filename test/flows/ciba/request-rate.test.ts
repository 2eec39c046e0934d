// Push-notification flooding (MFA fatigue): the pending cap bounds how many requests wait at once,
// not how fast they come. A client that asks for requested_expiry=1 lets each request lapse before
// the next, so the cap never fills and the user's device gets a notification every ~100 ms. Two
// limits stop it: a minimum requested_expiry (CIBA_MIN_REQUESTED_EXPIRY, 10 s by default; CIBA Core
// §7.1 lets the OP decide how long a request lives) and a rate per client and user
// (CIBA_RATE_LIMIT_PER_USER requests in any 60 s), answered as the pending cap is: access_denied,
// 403 at this endpoint (CIBA Core §13), with Retry-After saying when the next request is accepted.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../../src/config.js'
import { applySeed } from '../../../src/seed/apply.js'
import { BANK, createCibaTestApp, NO_STORE, startCiba, type CibaTestApp } from './harness.js'

const OTHER = { client_id: 'other', client_secret: 'other-secret' }
const TOO_FAST = { error: 'access_denied', error_description: 'too many requests from this client for this user, retry later' }

async function appWith(env: Record<string, string>): Promise<CibaTestApp> {
  const authz = await createCibaTestApp({ env })
  await applySeed(authz.db, {
    clients: [
      {
        clientId: 'other',
        secrets: [{ value: 'other-secret' }],
        allowedGrantTypes: ['urn:openid:params:grant-type:ciba'],
        allowedScopes: ['openid'],
      },
    ],
    users: [{ subjectId: 'u-dave', username: 'dave', password: 'dave-pw' }],
  })
  return authz
}

const start = (authz: CibaTestApp, client: Record<string, string>, extra: Record<string, string> = {}) =>
  startCiba(authz, { ...client, scope: 'openid', login_hint: 'alice', ...extra })
const stored = async (authz: CibaTestApp) =>
  (
    await authz.db.query<{ client_id: string; subject_id: string; n: number }>(
      'SELECT client_id, subject_id, count(*)::int AS n FROM ciba_requests GROUP BY client_id, subject_id ORDER BY client_id, subject_id',
    )
  ).rows

describe('CIBA_RATE_LIMIT_PER_USER and CIBA_MIN_REQUESTED_EXPIRY', () => {
  it('default to 5 requests a minute and 10 seconds; 0 turns the rate off; bad values are refused', () => {
    expect(loadConfig({})).toMatchObject({ cibaRateLimitPerUser: 5, cibaMinRequestedExpiry: 10 })
    expect(loadConfig({ CIBA_RATE_LIMIT_PER_USER: '0', CIBA_MIN_REQUESTED_EXPIRY: '1' })).toMatchObject({
      cibaRateLimitPerUser: 0,
      cibaMinRequestedExpiry: 1,
    })
    for (const bad of ['-1', '2.5', 'many']) {
      expect(() => loadConfig({ CIBA_RATE_LIMIT_PER_USER: bad })).toThrow(
        /^CIBA_RATE_LIMIT_PER_USER must be an integer from 0 to 100000, got "/,
      )
    }
    for (const bad of ['0', '-1', '2.5']) {
      expect(() => loadConfig({ CIBA_MIN_REQUESTED_EXPIRY: bad })).toThrow(
        /^CIBA_MIN_REQUESTED_EXPIRY must be a whole number of seconds from 1 to 31536000, got "/,
      )
    }
  })
})

describe('a client flooding one user with short-lived requests (defaults: 5 a minute, at least 10 s)', () => {
  let authz: CibaTestApp
  beforeAll(async () => {
    authz = await appWith({})
  })
  afterAll(() => authz.close())
  beforeEach(async () => {
    await authz.db.query('DELETE FROM ciba_requests')
    authz.notifications.length = 0
  })

  it('cannot ask for requested_expiry=1 (or anything under 10 s) to slip past the pending cap', async () => {
    for (const v of ['1', '9']) {
      const res = await start(authz, BANK, { requested_expiry: v })
      expect({ status: res.statusCode, body: res.json() }).toEqual({
        status: 400,
        body: { error: 'invalid_request', error_description: 'requested_expiry must be at least 10 seconds' },
      })
      expect(res.headers).toMatchObject(NO_STORE)
    }
    expect(authz.notifications).toEqual([])
    expect(await stored(authz)).toEqual([])
    expect((await start(authz, BANK, { requested_expiry: '10' })).json()).toMatchObject({ expires_in: 10 })
  })

  it('gets 5 notifications to the user a minute, even when each request lapses before the next', async () => {
    // One request every 11 s, each expired before the next: the pending cap (10) never binds.
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) {
      statuses.push((await start(authz, BANK, { requested_expiry: '10' })).statusCode)
      authz.clock.advance(11)
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200])
    // 55 s after the first: the sixth in the same minute is refused, and says when to come back.
    const refused = await start(authz, BANK, { requested_expiry: '10' })
    expect({ status: refused.statusCode, body: refused.json() }).toEqual({ status: 403, body: TOO_FAST })
    expect(refused.headers).toMatchObject({ ...NO_STORE, 'retry-after': '5' })
    expect(authz.notifications).toHaveLength(5)
    expect(await stored(authz)).toEqual([{ client_id: 'bank', subject_id: 'u-alice', n: 5 }])
    // Still refused 4 s later (Retry-After counts down); accepted once the first request is a minute old.
    authz.clock.advance(4)
    expect((await start(authz, BANK)).headers['retry-after']).toBe('1')
    authz.clock.advance(1)
    expect((await start(authz, BANK)).statusCode).toBe(200)
    expect(authz.notifications).toHaveLength(6)
  })

  it('counts per client and user: a flooding client keeps no other client from the user, nor itself from other users', async () => {
    for (let i = 0; i < 5; i++) expect((await start(authz, BANK)).statusCode).toBe(200)
    expect((await start(authz, BANK)).statusCode).toBe(403)
    for (let i = 0; i < 5; i++) expect((await start(authz, OTHER)).statusCode).toBe(200)
    expect((await start(authz, BANK, { login_hint: 'dave' })).statusCode).toBe(200)
    expect(await stored(authz)).toEqual([
      { client_id: 'bank', subject_id: 'u-alice', n: 5 },
      { client_id: 'bank', subject_id: 'u-dave', n: 1 },
      { client_id: 'other', subject_id: 'u-alice', n: 5 },
    ])
  })

  it('counts requests whatever became of them: denied, approved or expired ones still count', async () => {
    for (let i = 0; i < 5; i++) expect((await start(authz, BANK)).statusCode).toBe(200)
    await authz.db.query(`UPDATE ciba_requests SET status = 'denied'`)
    expect((await start(authz, BANK)).json()).toEqual(TOO_FAST)
  })
})

describe('the rate under concurrency and with other settings', () => {
  it(
    'holds exactly: of 8 simultaneous requests 3 are accepted, in every trial (rate 3, no pending cap)',
    { timeout: 120_000 },
    async () => {
      const authz = await appWith({ CIBA_RATE_LIMIT_PER_USER: '3', CIBA_MAX_PENDING_PER_USER: '0' })
      try {
        const over: number[] = []
        for (let trial = 0; trial < 10; trial++) {
          await authz.db.query('DELETE FROM ciba_requests')
          const statuses = (await Promise.all(Array.from({ length: 8 }, () => start(authz, BANK)))).map((r) => r.statusCode)
          const n = (await stored(authz))[0]?.n ?? 0
          if (statuses.filter((s) => s === 200).length !== 3 || statuses.filter((s) => s === 403).length !== 5 || n !== 3) over.push(trial)
        }
        expect(over).toEqual([])
      } finally {
        await authz.close()
      }
    },
  )

  it('CIBA_RATE_LIMIT_PER_USER=0 turns the rate off (the pending cap still holds)', async () => {
    const authz = await appWith({ CIBA_RATE_LIMIT_PER_USER: '0', CIBA_MAX_PENDING_PER_USER: '0' })
    try {
      for (let i = 0; i < 25; i++) expect((await start(authz, BANK)).statusCode).toBe(200)
      expect(await stored(authz)).toEqual([{ client_id: 'bank', subject_id: 'u-alice', n: 25 }])
    } finally {
      await authz.close()
    }
  })

  it('CIBA_MIN_REQUESTED_EXPIRY is never more than the client lifetime, which stays reachable', async () => {
    const authz = await appWith({ CIBA_MIN_REQUESTED_EXPIRY: '200' })
    try {
      // bank's requests live at most 120 s: then 120 is both the least and the most it may ask for.
      const res = await start(authz, BANK, { requested_expiry: '119' })
      expect(res.json()).toEqual({ error: 'invalid_request', error_description: 'requested_expiry must be at least 120 seconds' })
      expect((await start(authz, BANK, { requested_expiry: '120' })).json()).toMatchObject({ expires_in: 120 })
      expect((await start(authz, OTHER)).json()).toMatchObject({ expires_in: 300 })
    } finally {
      await authz.close()
    }
  })
})
