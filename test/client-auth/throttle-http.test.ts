// Failed client authentication throttled per client and source address, across two replicas on
// one database (RFC 6749 §10.10, RFC 9700 §4.15).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { basic, createTestApp, form, FORM, type TestApp } from '../helpers/app.js'
import { createTestDb, type TestDb } from '../helpers/db.js'
import { CC, seedTokens } from '../flows/token/token-fixtures.js'

let db: TestDb
let a: TestApp
let b: TestApp
const env = { CLIENT_AUTH_FAILURE_LIMIT: '5', CLIENT_AUTH_BLOCK_DURATION: '60', CLIENT_AUTH_BLOCK_MAX_DURATION: '3600' }
beforeAll(async () => {
  db = await createTestDb()
  a = await createTestApp({ env, testDb: db })
  b = await createTestApp({ env, testDb: db })
  b.clock.set(a.clock.now())
  await seedTokens(a)
})
afterAll(async () => {
  await a?.close()
  await b?.close()
  await db?.close()
})

const advance = (seconds: number) => {
  a.clock.advance(seconds)
  b.clock.advance(seconds)
}
const token = (app: TestApp, address: string, headers: Record<string, string>, params: Record<string, string> = {}) =>
  app.app.inject({
    method: 'POST',
    url: '/connect/token',
    remoteAddress: address,
    headers: { ...FORM, ...headers },
    payload: form({ grant_type: CC, ...params }),
  })
const introspect = (app: TestApp, address: string, params: Record<string, string>) =>
  app.app.inject({
    method: 'POST',
    url: '/connect/introspect',
    remoteAddress: address,
    headers: FORM,
    payload: form({ token: 'x', ...params }),
  })

const BLOCKED = { error: 'invalid_client', error_description: 'too many failed client authentications from this address, retry later' }

describe('client authentication throttling', () => {
  it('blocks one client from one address after the limit, on every replica, and not from another address', async () => {
    const A = '203.0.113.10'
    for (let i = 1; i <= 5; i++) {
      const res = await token(i % 2 ? a : b, A, { authorization: basic('backend', `wrong-${i}`) })
      expect(res.statusCode).toBe(401)
      expect(res.json()).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' })
      expect(res.headers['www-authenticate']).toBe('Basic realm="https://authz.test"')
      expect(res.headers['retry-after']).toBe(i < 5 ? undefined : '60')
    }
    for (const app of [a, b]) {
      const refused = await token(app, A, { authorization: basic('backend', 's3cret') })
      expect(refused.statusCode).toBe(401)
      expect(refused.json()).toEqual(BLOCKED)
      expect(refused.headers['retry-after']).toBe('60')
      expect(refused.headers['www-authenticate']).toBe('Basic realm="https://authz.test"')
      expect(refused.headers['cache-control']).toBe('no-store')
    }
    // Form-posted credentials from the blocked address: no WWW-Authenticate, still Retry-After.
    const post = await token(b, A, {}, { client_id: 'backend', client_secret: 's3cret' })
    expect({
      status: post.statusCode,
      body: post.json(),
      retry: post.headers['retry-after'],
      www: post.headers['www-authenticate'],
    }).toEqual({ status: 401, body: BLOCKED, retry: '60', www: undefined })
    // The same endpoint family shares the throttle: revocation from A is refused too.
    const revoke = await a.app.inject({
      method: 'POST',
      url: '/connect/revocation',
      remoteAddress: A,
      headers: { ...FORM, authorization: basic('backend', 's3cret') },
      payload: form({ token: 'x' }),
    })
    expect({ status: revoke.statusCode, body: revoke.json() }).toEqual({ status: 401, body: BLOCKED })

    for (const app of [a, b])
      expect((await token(app, '198.51.100.20', { authorization: basic('backend', 's3cret') })).statusCode).toBe(200)
    expect((await token(a, A, { authorization: basic('other', 'other-secret') })).statusCode).toBe(200)

    advance(59)
    expect((await token(b, A, { authorization: basic('backend', 's3cret') })).headers['retry-after']).toBe('1')
    advance(1)
    expect((await token(b, A, { authorization: basic('backend', 's3cret') })).statusCode).toBe(200)
  })

  it('counts an IPv6 subscriber by its /64: rotating through its own addresses buys no fresh guesses', async () => {
    // The attack: one subscriber holds a whole /64 and takes a new address for every few
    // guesses; counted per exact address, each address would start with a fresh allowance.
    const inSubnet = (i: number) => `2001:db8:1:2:${(i + 1).toString(16)}::${i + 7}`
    for (let i = 0; i < 5; i++) {
      const res = await token(i % 2 ? a : b, inSubnet(i), { authorization: basic('backend', `guess-${i}`) })
      expect({ status: res.statusCode, body: res.json(), retry: res.headers['retry-after'] }).toEqual({
        status: 401,
        body: { error: 'invalid_client', error_description: 'client authentication failed' },
        retry: i < 4 ? undefined : '60',
      })
    }
    // A sixth address of the same /64, now with the right secret: refused, on either replica.
    for (const app of [a, b]) {
      const refused = await token(app, '2001:db8:1:2:ffff:ffff:ffff:fffe', { authorization: basic('backend', 's3cret') })
      expect({ status: refused.statusCode, body: refused.json(), retry: refused.headers['retry-after'] }).toEqual({
        status: 401,
        body: BLOCKED,
        retry: '60',
      })
    }
    const { rows } = await a.db.query(`SELECT name, source FROM failure_counters WHERE kind = 'client' AND source LIKE '2001:db8:1:%'`)
    expect(rows).toEqual([{ name: 'backend', source: '2001:db8:1:2::/64' }])
    // The next /64 is another subscriber: unaffected.
    expect((await token(a, '2001:db8:1:3::1', { authorization: basic('backend', 's3cret') })).statusCode).toBe(200)
  })

  it('doubles the block when the failures resume after it', async () => {
    const A = '203.0.113.11'
    for (let i = 0; i < 5; i++) await token(a, A, { authorization: basic('other', 'nope') })
    advance(60)
    for (let i = 0; i < 4; i++) await token(b, A, { authorization: basic('other', 'nope') })
    const fifth = await token(b, A, { authorization: basic('other', 'nope') })
    expect(fifth.headers['retry-after']).toBe('120')
    advance(60)
    expect((await token(a, A, { authorization: basic('other', 'other-secret') })).statusCode).toBe(401)
    advance(60)
    expect((await token(a, A, { authorization: basic('other', 'other-secret') })).statusCode).toBe(200)
  })

  it('a success from the address forgets its failures', async () => {
    const A = '203.0.113.12'
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 4; i++)
        expect((await token(a, A, { authorization: basic('ref-client', 'nope') })).headers['retry-after']).toBeUndefined()
      expect((await token(a, A, { authorization: basic('ref-client', 'ref-secret') })).statusCode).toBe(200)
    }
  })

  it('counts unknown clients too, so probing client ids is throttled alike', async () => {
    const A = '203.0.113.13'
    const answers = []
    for (let i = 0; i < 6; i++) answers.push((await token(a, A, { authorization: basic('no-such-client', 'x') })).headers['retry-after'])
    expect(answers).toEqual([undefined, undefined, undefined, undefined, '60', '60'])
  })

  it('throttles API resources at the introspection endpoint by name and address', async () => {
    const A = '203.0.113.14'
    for (let i = 0; i < 5; i++)
      expect((await introspect(i % 2 ? a : b, A, { client_id: 'orders-api', client_secret: 'nope' })).statusCode).toBe(401)
    const refused = await introspect(a, A, { client_id: 'orders-api', client_secret: 'orders-secret' })
    expect({ status: refused.statusCode, retry: refused.headers['retry-after'], body: refused.json() }).toEqual({
      status: 401,
      retry: '60',
      body: { ...BLOCKED },
    })
    const other = await introspect(b, '198.51.100.21', { client_id: 'orders-api', client_secret: 'orders-secret' })
    expect({ status: other.statusCode, body: other.json() }).toEqual({ status: 200, body: { active: false } })
  })

  it('logs every failure with client_id, address and reason, and never the secret', async () => {
    a.logs.length = 0
    await token(a, '203.0.113.15', { authorization: basic('backend', 'Sup3r-Secret-Guess') })
    await token(a, '203.0.113.15', {}, { client_id: 'disabled', client_secret: 'disabled-secret' })
    const lines = a.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'client authentication rejected')
    expect(lines).toEqual([
      expect.objectContaining({ level: 30, client_id: 'backend', address: '203.0.113.15', reason: 'bad_secret' }),
      expect.objectContaining({ level: 30, client_id: 'disabled', address: '203.0.113.15', reason: 'disabled' }),
    ])
    expect(a.logs.join('\n')).not.toMatch(/Sup3r-Secret-Guess|disabled-secret/)
  })
})
