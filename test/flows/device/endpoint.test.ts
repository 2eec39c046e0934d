// POST /connect/deviceauthorization (RFC 8628 §3.1-3.2): the response, configuration and the
// client's pollingInterval, codes stored only as hashes and unique, and every error with its
// status and code.
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_ISSUER, type TestApp } from '../../helpers/app.js'
import { authorize, CONSOLE, createDeviceTestApp, NO_STORE, start, TV, USER_CODE } from './harness.js'

let authz: TestApp
beforeAll(async () => {
  // Every request here comes from one address, more than DEVICE_MAX_PENDING_PER_ADDRESS allows
  // (that cap: pending-per-address.test.ts).
  authz = await createDeviceTestApp({ env: { DEVICE_MAX_PENDING_PER_ADDRESS: '0' } })
})
afterAll(() => authz.close())

async function expectError(res: Awaited<ReturnType<typeof authorize>>, status: number, error: string, description: string) {
  expect(res.headers).toMatchObject(NO_STORE)
  expect({ status: res.statusCode, body: res.json() }).toEqual({ status, body: { error, error_description: description } })
}

describe('device authorization endpoint', () => {
  it('answers a public client with both codes, the verification URIs, expires_in and interval', async () => {
    const res = await authorize(authz, { ...TV, scope: 'openid profile orders.read offline_access' })
    expect(res.statusCode).toBe(200)
    expect(res.headers).toMatchObject(NO_STORE)
    const body = res.json()
    expect(Object.keys(body).sort()).toEqual([
      'device_code',
      'expires_in',
      'interval',
      'user_code',
      'verification_uri',
      'verification_uri_complete',
    ])
    expect(body.device_code).toMatch(/^[A-Za-z0-9_-]{43}$/) // 256 bits
    expect(body.user_code).toMatch(USER_CODE)
    expect(body).toMatchObject({
      verification_uri: `${TEST_ISSUER}/device`,
      verification_uri_complete: `${TEST_ISSUER}/device?user_code=${body.user_code}`,
      expires_in: 300,
      interval: 5,
    })
    // Neither code is stored as such: only SHA-256 of the device code and of the normalized user code.
    const { rows } = await authz.db.query<Record<string, unknown>>(
      'SELECT device_code_hash, user_code_hash, client_id, requested_scopes, status, interval_seconds FROM device_authorizations WHERE client_id = $1',
      ['tv'],
    )
    const sha = (v: string) => createHash('sha256').update(v).digest('base64url')
    expect(rows).toContainEqual({
      device_code_hash: sha(body.device_code),
      user_code_hash: sha(body.user_code.replace('-', '')),
      client_id: 'tv',
      requested_scopes: ['openid', 'profile', 'orders.read', 'offline_access'],
      status: 'pending',
      interval_seconds: 5,
    })
    const dump = JSON.stringify((await authz.db.query('SELECT * FROM device_authorizations')).rows)
    expect(dump).not.toContain(body.device_code)
    expect(dump).not.toContain(body.user_code.replace('-', ''))
  })

  it('authenticates a confidential client as the token endpoint does; its pollingInterval wins', async () => {
    const body = await start(authz, { scope: 'orders.read' }, CONSOLE)
    expect(body).toMatchObject({ expires_in: 300, interval: 7 })
    const viaPost = await start(authz, { client_id: 'console', client_secret: 'console-secret', scope: 'openid' })
    expect(viaPost.interval).toBe(7)
  })

  it('without scope asks for the client API scopes', async () => {
    const body = await start(authz, TV)
    const { rows } = await authz.db.query('SELECT requested_scopes FROM device_authorizations WHERE user_code_hash = $1', [
      createHash('sha256').update(body.user_code.replace('-', '')).digest('base64url'),
    ])
    expect(rows).toEqual([{ requested_scopes: ['orders.read'] }])
  })

  it('answers a browser-based client from the origins it lists (CORS), no one else', async () => {
    const listed = await authorize(authz, TV, { origin: 'https://tv.example' })
    expect(listed.statusCode).toBe(200)
    expect(listed.headers['access-control-allow-origin']).toBe('https://tv.example')
    const other = await authorize(authz, TV, { origin: 'https://evil.example' })
    expect(other.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('gives every request its own user code', async () => {
    const codes = await Promise.all(Array.from({ length: 30 }, () => start(authz, TV)))
    expect(new Set(codes.map((c) => c.user_code)).size).toBe(30)
    expect(new Set(codes.map((c) => c.device_code)).size).toBe(30)
  })

  it('unknown client, wrong secret, missing secret: 401 invalid_client', async () => {
    await expectError(await authorize(authz, { client_id: 'nobody' }), 401, 'invalid_client', 'client authentication failed')
    const wrong = await authorize(authz, {}, { authorization: 'Basic ' + Buffer.from('console:nope').toString('base64') })
    await expectError(wrong, 401, 'invalid_client', 'client authentication failed')
    expect(wrong.headers['www-authenticate']).toMatch(/^Basic realm=/)
    await expectError(await authorize(authz, { client_id: 'console' }), 401, 'invalid_client', 'client authentication failed')
    await expectError(await authorize(authz, {}), 401, 'invalid_client', 'client authentication is required')
  })

  it('a client without the grant type: 400 unauthorized_client', async () => {
    await expectError(
      await authorize(authz, { client_id: 'cc-only', client_secret: 'cc-secret' }),
      400,
      'unauthorized_client',
      'the client may not use the device authorization grant',
    )
  })

  it('scope checks as at the token endpoint: invalid_scope', async () => {
    const notAllowed = await authorize(authz, { ...TV, scope: 'orders.write' })
    expect({ status: notAllowed.statusCode, error: notAllowed.json().error }).toEqual({ status: 400, error: 'invalid_scope' })
    const unknown = await authorize(authz, { ...TV, scope: 'nope' })
    expect({ status: unknown.statusCode, error: unknown.json().error }).toEqual({ status: 400, error: 'invalid_scope' })
    // offline_access needs allowOfflineAccess.
    const offline = await authorize(authz, { client_id: 'other-tv', scope: 'openid offline_access' })
    expect({ status: offline.statusCode, error: offline.json().error }).toEqual({ status: 400, error: 'invalid_scope' })
  })

  it('a repeated parameter or an over-long one: 400 invalid_request', async () => {
    const repeated = await authz.app.inject({
      method: 'POST',
      url: '/connect/deviceauthorization',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'client_id=tv&scope=openid&scope=profile',
    })
    expect({ status: repeated.statusCode, error: repeated.json().error }).toEqual({ status: 400, error: 'invalid_request' })
    const long = await authorize(authz, { ...TV, scope: 'a'.repeat(5000) })
    expect({ status: long.statusCode, error: long.json().error }).toEqual({ status: 400, error: 'invalid_request' })
  })
})

describe('discovery', () => {
  it('lists the device authorization endpoint and the device_code grant type', async () => {
    const doc = (await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json()
    expect(doc.device_authorization_endpoint).toBe(`${TEST_ISSUER}/connect/deviceauthorization`)
    expect(doc.grant_types_supported).toContain('urn:ietf:params:oauth:grant-type:device_code')
  })
})

describe('device authorization configuration', () => {
  it('DEVICE_CODE_LIFETIME and DEVICE_POLLING_INTERVAL set the defaults', async () => {
    const t2 = await createDeviceTestApp({ env: { DEVICE_CODE_LIFETIME: '120', DEVICE_POLLING_INTERVAL: '9' } })
    try {
      expect(await start(t2, TV)).toMatchObject({ expires_in: 120, interval: 9 })
      expect(await start(t2, { scope: 'openid' }, CONSOLE)).toMatchObject({ expires_in: 120, interval: 7 })
    } finally {
      await t2.close()
    }
  })
})
