// Push-notification flooding (MFA fatigue): the pending cap bounds how many requests wait at once,
// not how fast they come. A client that asks for requested_expiry=1 lets each request lapse before
// the next, so the cap never fills and the user's device gets a notification every ~100 ms. A
// minimum requested_expiry (CIBA_MIN_REQUESTED_EXPIRY, 10 s by default; CIBA Core §7.1 lets the OP
// decide how long a request lives) keeps every request counted by the cap for that long.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../../src/config.js'
import { applySeed } from '../../../src/seed/apply.js'
import { BANK, createCibaTestApp, NO_STORE, startCiba, type CibaTestApp } from './harness.js'

const OTHER = { client_id: 'other', client_secret: 'other-secret' }

async function appWith(env: Record<string, string>): Promise<CibaTestApp> {
  const t = await createCibaTestApp({ env })
  await applySeed(t.db, {
    clients: [{ clientId: 'other', secrets: [{ value: 'other-secret' }], allowedGrantTypes: ['urn:openid:params:grant-type:ciba'], allowedScopes: ['openid'] }],
    users: [{ subjectId: 'u-dave', username: 'dave', password: 'dave-pw' }],
  })
  return t
}

const start = (t: CibaTestApp, client: Record<string, string>, extra: Record<string, string> = {}) =>
  startCiba(t, { ...client, scope: 'openid', login_hint: 'alice', ...extra })
const stored = async (t: CibaTestApp) =>
  (await t.db.query<{ client_id: string; subject_id: string; n: number }>(
    'SELECT client_id, subject_id, count(*)::int AS n FROM ciba_requests GROUP BY client_id, subject_id ORDER BY client_id, subject_id')).rows

describe('CIBA_MIN_REQUESTED_EXPIRY', () => {
  it('defaults to 10 seconds; bad values are refused', () => {
    expect(loadConfig({})).toMatchObject({ cibaMinRequestedExpiry: 10 })
    expect(loadConfig({ CIBA_MIN_REQUESTED_EXPIRY: '1' })).toMatchObject({ cibaMinRequestedExpiry: 1 })
    for (const bad of ['0', '-1', '2.5']) {
      expect(() => loadConfig({ CIBA_MIN_REQUESTED_EXPIRY: bad })).toThrow(/^CIBA_MIN_REQUESTED_EXPIRY must be a whole number of seconds from 1 to 31536000, got "/)
    }
  })
})

describe('a client flooding one user with short-lived requests (default: at least 10 s)', () => {
  let t: CibaTestApp
  beforeAll(async () => {
    t = await appWith({})
  })
  afterAll(() => t.close())
  beforeEach(async () => {
    await t.db.query('DELETE FROM ciba_requests')
    t.notifications.length = 0
  })

  it('cannot ask for requested_expiry=1 (or anything under 10 s) to slip past the pending cap', async () => {
    for (const v of ['1', '9']) {
      const res = await start(t, BANK, { requested_expiry: v })
      expect({ status: res.statusCode, body: res.json() }).toEqual({
        status: 400, body: { error: 'invalid_request', error_description: 'requested_expiry must be at least 10 seconds' },
      })
      expect(res.headers).toMatchObject(NO_STORE)
    }
    expect(t.notifications).toEqual([])
    expect(await stored(t)).toEqual([])
    expect((await start(t, BANK, { requested_expiry: '10' })).json()).toMatchObject({ expires_in: 10 })
  })
})

describe('the minimum with other settings', () => {
  it('CIBA_MIN_REQUESTED_EXPIRY is never more than the client lifetime, which stays reachable', async () => {
    const t = await appWith({ CIBA_MIN_REQUESTED_EXPIRY: '200' })
    try {
      // bank's requests live at most 120 s: then 120 is both the least and the most it may ask for.
      const res = await start(t, BANK, { requested_expiry: '119' })
      expect(res.json()).toEqual({ error: 'invalid_request', error_description: 'requested_expiry must be at least 120 seconds' })
      expect((await start(t, BANK, { requested_expiry: '120' })).json()).toMatchObject({ expires_in: 120 })
      expect((await start(t, OTHER)).json()).toMatchObject({ expires_in: 300 })
    } finally {
      await t.close()
    }
  })
})
