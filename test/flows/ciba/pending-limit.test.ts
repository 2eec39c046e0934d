// The cap on pending CIBA requests (push-notification fatigue) counts per client and user, so no
// client, nor anyone who knows a user's login hint, can keep other clients from reaching that user
// (CIBA Core §7.1: access_denied, 403 at this endpoint). CIBA_MAX_PENDING_PER_USER sets it; 0: none.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../../src/config.js'
import { applySeed } from '../../../src/seed/apply.js'
import { BANK, createCibaTestApp, NO_STORE, startCiba, type CibaTestApp } from './harness.js'

const OTHER = { client_id: 'other', client_secret: 'other-secret' }
const DENIED = { error: 'access_denied', error_description: 'too many pending requests from this client for this user' }

async function appWithCap(cap: string | undefined, env: Record<string, string> = {}): Promise<CibaTestApp> {
  const authz = await createCibaTestApp({ env: cap === undefined ? env : { ...env, CIBA_MAX_PENDING_PER_USER: cap } })
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

const start = (authz: CibaTestApp, client: Record<string, string>, loginHint = 'alice') =>
  startCiba(authz, { ...client, scope: 'openid', login_hint: loginHint })
const pending = async (authz: CibaTestApp) =>
  (
    await authz.db.query<{ client_id: string; n: number }>(
      `SELECT client_id, count(*)::int AS n FROM ciba_requests WHERE status = 'pending' GROUP BY client_id ORDER BY client_id`,
    )
  ).rows

describe('CIBA_MAX_PENDING_PER_USER', () => {
  it('defaults to 10, accepts 0 (no cap), refuses a negative or fractional value', () => {
    expect(loadConfig({}).cibaMaxPendingPerUser).toBe(10)
    expect(loadConfig({ CIBA_MAX_PENDING_PER_USER: '0' }).cibaMaxPendingPerUser).toBe(0)
    for (const bad of ['-1', '2.5', 'many'])
      expect(() => loadConfig({ CIBA_MAX_PENDING_PER_USER: bad })).toThrow(
        /^CIBA_MAX_PENDING_PER_USER must be an integer from 0 to 100000, got "/,
      )
  })
})

describe('a cap of 3', () => {
  let authz: CibaTestApp
  beforeAll(async () => {
    authz = await appWithCap('3')
  })
  afterAll(() => authz.close())
  beforeEach(async () => {
    await authz.db.query('DELETE FROM ciba_requests')
  })

  it('counts per client and user: one client at its cap keeps no other client from the user', async () => {
    for (let i = 0; i < 3; i++) expect((await start(authz, BANK)).statusCode).toBe(200)
    const refused = await start(authz, BANK)
    expect({ status: refused.statusCode, body: refused.json() }).toEqual({ status: 403, body: DENIED })
    expect(refused.headers).toMatchObject(NO_STORE)
    // Another client still reaches alice, and the first client still reaches dave.
    for (let i = 0; i < 3; i++) expect((await start(authz, OTHER)).statusCode).toBe(200)
    expect((await start(authz, BANK, 'dave')).statusCode).toBe(200)
    expect(await pending(authz)).toEqual([
      { client_id: 'bank', n: 4 },
      { client_id: 'other', n: 3 },
    ])
  })

  it('frees a place when a request expires or is decided', async () => {
    for (let i = 0; i < 3; i++) expect((await start(authz, BANK)).statusCode).toBe(200)
    await authz.db.query(`UPDATE ciba_requests SET status = 'denied' WHERE id = (SELECT id FROM ciba_requests LIMIT 1)`)
    expect((await start(authz, BANK)).statusCode).toBe(200)
    expect((await start(authz, BANK)).statusCode).toBe(403)
    authz.clock.advance(121) // bank's requests live 120 s
    expect((await start(authz, BANK)).statusCode).toBe(200)
  })

  it('holds under concurrency: of 8 simultaneous requests exactly 3 are accepted, in every trial', { timeout: 120_000 }, async () => {
    const over: number[] = []
    for (let trial = 0; trial < 15; trial++) {
      await authz.db.query('DELETE FROM ciba_requests')
      const statuses = (await Promise.all(Array.from({ length: 8 }, () => start(authz, BANK)))).map((r) => r.statusCode)
      const n = (await pending(authz))[0]?.n ?? 0
      if (statuses.filter((s) => s === 200).length !== 3 || statuses.filter((s) => s === 403).length !== 5 || n !== 3) over.push(trial)
    }
    expect(over).toEqual([])
  })
})

describe('no cap', () => {
  it('CIBA_MAX_PENDING_PER_USER=0 accepts any number of pending requests', async () => {
    // The rate per client and user (request-rate.test.ts) is off here: this is about the cap alone.
    const authz = await appWithCap('0', { CIBA_RATE_LIMIT_PER_USER: '0' })
    try {
      for (let i = 0; i < 25; i++) expect((await start(authz, BANK)).statusCode).toBe(200)
      expect(await pending(authz)).toEqual([{ client_id: 'bank', n: 25 }])
    } finally {
      await authz.close()
    }
  })
})
