// The database stops answering (frozen, as a stopped server is): every request that needs it is
// answered 503 temporarily_unavailable with Retry-After within DATABASE_QUERY_TIMEOUT, readiness
// answers 503 within a second, JWTs for clients whose records are cached go on being issued for
// CLIENT_CACHE_MAX_STALE past CLIENT_CACHE_TTL (and a user's JWT is introspected as long as that
// user's enabled state is cached; one never looked up is 503, never active on a guess), and the
// outage is logged once when it begins and once when it ends, with the count of failures: never a
// stack trace per request.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { applySeed } from '../../src/seed/apply.js'
import { basic, createTestApp, FORM, form, type TestApp } from '../helpers/app.js'
import { postFormBasic } from '../helpers/http.js'
import { createTestDb, type TestDb } from '../helpers/db.js'
import { createFreezableDb, type FreezableDb } from '../helpers/faulty-db.js'

let authz: TestApp
let tdb: TestDb
let fdb: FreezableDb

beforeAll(async () => {
  tdb = await createTestDb()
  fdb = createFreezableDb(tdb.db)
  authz = await createTestApp({
    testDb: { ...tdb, db: fdb.db },
    env: { DATABASE_QUERY_TIMEOUT: '0.3', DATABASE_CONNECT_TIMEOUT: '1', CLIENT_CACHE_TTL: '5', CLIENT_CACHE_MAX_STALE: '60' },
  })
  await applySeed(tdb.db, {
    apiScopes: [{ name: 'orders.read' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read'], secrets: [{ value: 'api-secret' }] }],
    identityResources: [],
    users: [
      { subjectId: 'u-known', username: 'known', password: 'known-pw' },
      { subjectId: 'u-cold', username: 'cold', password: 'cold-pw' },
    ],
    clients: [
      { clientId: 'app', secrets: [{ value: 'app-secret' }], allowedGrantTypes: ['password'], allowedScopes: ['orders.read'] },
      {
        clientId: 'jwt-client',
        secrets: [{ value: 'jwt-secret' }],
        allowedGrantTypes: ['client_credentials'],
        allowedScopes: ['orders.read'],
      },
      {
        clientId: 'ref-client',
        secrets: [{ value: 'ref-secret' }],
        allowedGrantTypes: ['client_credentials'],
        allowedScopes: ['orders.read'],
        accessTokenType: 'reference',
      },
      {
        clientId: 'warm-client',
        secrets: [{ value: 'warm-secret' }],
        allowedGrantTypes: ['client_credentials'],
        allowedScopes: ['orders.read'],
      },
      {
        clientId: 'cold-client',
        secrets: [{ value: 'cold-secret' }],
        allowedGrantTypes: ['client_credentials'],
        allowedScopes: ['orders.read'],
      },
    ],
  })
})
afterAll(async () => {
  fdb.thaw()
  await authz.close()
  await tdb.close()
})

const token = (id: string, secret: string) =>
  postFormBasic(authz.app, '/connect/token', { grant_type: 'client_credentials', scope: 'orders.read' }, id, secret)

const introspect = (tok: string) => postFormBasic(authz.app, '/connect/introspect', { token: tok }, 'orders-api', 'api-secret')

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t0 = Date.now()
  const r = await f()
  return [r, Date.now() - t0]
}

function expectUnavailable(res: Awaited<ReturnType<typeof token>>) {
  expect(res.statusCode).toBe(503)
  expect(res.json()).toEqual({ error: 'temporarily_unavailable' })
  expect(res.headers['retry-after']).toBe('1')
  expect(res.headers['cache-control']).toBe('no-store')
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
}

describe('a frozen database', { timeout: 30_000 }, () => {
  it('answers 503 in bounded time, keeps issuing JWTs from the cache for a bounded time, and logs the outage once', async () => {
    // Before the outage: the clients' and the API's records are loaded into the cache.
    const jwt = (await token('jwt-client', 'jwt-secret')).json<{ access_token: string }>().access_token
    expect((await introspect(jwt)).json()).toMatchObject({ active: true, client_id: 'jwt-client' })
    expect((await token('ref-client', 'ref-secret')).statusCode).toBe(200)
    const logsBefore = authz.logs.length

    fdb.freeze()
    // A reference token must be stored: 503 within the query bound, not a hang.
    const [ref, refMs] = await timed(() => token('ref-client', 'ref-secret'))
    expectUnavailable(ref)
    expect(refMs).toBeLessThan(1500)
    // A client never loaded: its record cannot be read.
    expectUnavailable(await token('cold-client', 'cold-secret'))

    // A JWT for a cached client needs no database: issued now, and after the cache TTL from the
    // stale record, until CLIENT_CACHE_MAX_STALE past the TTL.
    expect((await token('jwt-client', 'jwt-secret')).statusCode).toBe(200)
    authz.clock.advance(6)
    const [stale, staleMs] = await timed(() => token('jwt-client', 'jwt-secret'))
    expect(stale.statusCode).toBe(200)
    expect(staleMs).toBeLessThan(1500)
    authz.clock.advance(30)
    expect((await token('jwt-client', 'jwt-secret')).statusCode).toBe(200)
    expect((await token('jwt-client', 'wrong-secret')).statusCode).toBe(401) // the cached record still checks the secret
    const during = await introspect(jwt) // a JWT is still introspected by a cached API
    expect([during.statusCode, during.json().active]).toEqual([200, true])
    authz.clock.advance(30) // 66 s after the load: past TTL + max stale
    expectUnavailable(await token('jwt-client', 'jwt-secret'))

    // Readiness answers within a second.
    const [ready, readyMs] = await timed(() => authz.app.inject({ method: 'GET', url: '/health/ready' }))
    expect(readyMs).toBeLessThan(1000)
    expect(ready.statusCode).toBe(503)
    expect(ready.json()).toEqual({ status: 'not_ready', reason: 'database unavailable' })
    expect(fdb.held).toBeGreaterThan(0)

    fdb.thaw()
    // Within a second, the next request that probes the database finds it back.
    await vi.waitFor(async () => expect((await token('cold-client', 'cold-secret')).statusCode).toBe(200), { timeout: 3000, interval: 100 })
    expect((await authz.app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200)

    // One line when it began, one when it ended (with the count), nothing per request.
    const lines = authz.logs
      .slice(logsBefore)
      .map((l) => JSON.parse(l) as { level: number; msg: string; failures?: number; err?: { stack?: string } })
    const loud = lines.filter((l) => l.level >= 40)
    expect(loud.map((l) => l.msg)).toEqual([
      'database unavailable: answering 503 until it answers again; failures are counted, not logged',
      'database available again',
    ])
    expect(loud[1]!.failures).toBeGreaterThanOrEqual(3)
  })

  it('logs nothing per request when a browser app calls during the outage (CORS cannot load its client)', async () => {
    const fromBrowser = (id: string, secret: string) =>
      authz.app.inject({
        method: 'POST',
        url: '/connect/token',
        headers: { ...FORM, origin: 'https://app.example.com', authorization: basic(id, secret) },
        payload: form({ grant_type: 'client_credentials', scope: 'orders.read' }),
      })
    const logsBefore = authz.logs.length
    fdb.freeze()
    try {
      authz.clock.advance(120) // past CLIENT_CACHE_TTL + CLIENT_CACHE_MAX_STALE: nothing cached is usable
      for (let i = 0; i < 5; i++) expectUnavailable(await fromBrowser('cold-client', 'cold-secret'))
      expectUnavailable(await fromBrowser('cold-client', '')) // names no usable client: the origins list is needed
    } finally {
      fdb.thaw()
    }
    await vi.waitFor(async () => expect((await token('cold-client', 'cold-secret')).statusCode).toBe(200), { timeout: 3000, interval: 100 })
    const loud = authz.logs
      .slice(logsBefore)
      .map((l) => JSON.parse(l) as { level: number; msg: string })
      .filter((l) => l.level >= 40)
    expect(loud.map((l) => l.msg)).toEqual([
      'database unavailable: answering 503 until it answers again; failures are counted, not logged',
      'database available again',
    ])
  })

  it('introspects a user JWT from the cached user for a bounded time; a user never looked up is 503, not active', async () => {
    const userJwt = async (username: string) => {
      const res = await authz.app.inject({
        method: 'POST',
        url: '/connect/token',
        headers: { ...FORM, authorization: basic('app', 'app-secret') },
        payload: form({ grant_type: 'password', username, password: `${username}-pw`, scope: 'orders.read' }),
      })
      expect(res.statusCode).toBe(200)
      return res.json<{ access_token: string }>().access_token
    }
    const known = await userJwt('known')
    const cold = await userJwt('cold')
    // A client's own token, never introspected here: its client is cached (it was just issued).
    const own = (await token('warm-client', 'warm-secret')).json<{ access_token: string }>().access_token
    expect((await introspect(known)).json()).toMatchObject({ active: true, sub: 'u-known' })
    fdb.freeze()
    try {
      // Its subject is its client's id: judged from the cached client, as no user can be asked.
      expect((await introspect(own)).json()).toMatchObject({ active: true, sub: 'warm-client', client_id: 'warm-client' })
      authz.clock.advance(30) // past CLIENT_CACHE_TTL, within CLIENT_CACHE_MAX_STALE
      expect((await introspect(known)).json()).toMatchObject({ active: true, sub: 'u-known' })
      // Whether that user is still enabled cannot be known: never answered active on a guess.
      expectUnavailable(await introspect(cold))
    } finally {
      fdb.thaw()
    }
    await vi.waitFor(async () => expect((await introspect(cold)).json()).toMatchObject({ active: true, sub: 'u-cold' }), {
      timeout: 3000,
      interval: 100,
    })
  })

  it('answers readiness within a second when the database wait is bounded longer than that', async () => {
    const fdb2 = createFreezableDb(tdb.db)
    const t2 = await createTestApp({ testDb: { ...tdb, db: fdb2.db }, env: { DATABASE_QUERY_TIMEOUT: '5' } })
    try {
      fdb2.freeze()
      const [ready, ms] = await timed(() => t2.app.inject({ method: 'GET', url: '/health/ready' }))
      expect(ms).toBeLessThan(1000)
      expect([ready.statusCode, ready.json()]).toEqual([503, { status: 'not_ready', reason: 'database unavailable' }])
      expect(ready.headers['cache-control']).toBe('no-store')
    } finally {
      fdb2.thaw()
      await t2.app.close()
    }
  })
})
