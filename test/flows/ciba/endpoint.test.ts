// POST /connect/ciba: success shape, discovery, and every validation error with its exact status and code.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { basic } from '../../helpers/app.js'
import { BANK, createCibaTestApp, NO_STORE, signJwt, startCiba, TEST_ISSUER, type CibaTestApp } from './harness.js'

let authz: CibaTestApp
beforeAll(async () => {
  authz = await createCibaTestApp()
})
afterAll(() => authz.close())
// The pending limit (CIBA_MAX_PENDING_PER_USER, 10 per client and user) would otherwise refuse later tests.
beforeEach(async () => {
  await authz.db.query('DELETE FROM ciba_requests')
})

const ok = { ...BANK, scope: 'openid profile', login_hint: 'alice' }
/** A login_hint_token: signed by the client, for us, used once. */
const lht = (key: CibaTestApp['clientKey'], claims: Record<string, unknown>, opts: { lifetime?: number } = {}) =>
  signJwt(authz, key, { aud: TEST_ISSUER, jti: randomUUID(), ...claims }, opts)

async function expectError(
  params: Record<string, string>,
  status: number,
  error: string,
  description?: string,
  headers: Record<string, string> = {},
) {
  const res = await startCiba(authz, params, headers)
  expect({ status: res.statusCode, body: res.json() }).toEqual({
    status,
    body: { error, ...(description !== undefined ? { error_description: description } : {}) },
  })
  expect(res.headers).toMatchObject(NO_STORE)
  return res
}

describe('POST /connect/ciba success', () => {
  it('answers {auth_req_id, expires_in, interval} with no-store and stores the request hashed', async () => {
    const res = await startCiba(authz, { ...ok, binding_message: 'W4SCT', acr_values: 'tenant:acme idp:corp-ad 1' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.headers).toMatchObject(NO_STORE)
    const body = res.json()
    expect(Object.keys(body).sort()).toEqual(['auth_req_id', 'expires_in', 'interval'])
    expect(body.auth_req_id).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(body).toMatchObject({ expires_in: 120, interval: 5 })
    const { rows } = await authz.db.query<Record<string, unknown> & { id: string }>(
      'SELECT * FROM ciba_requests ORDER BY created_at DESC LIMIT 1',
    )
    expect(rows[0]).toMatchObject({
      client_id: 'bank',
      subject_id: 'u-alice',
      requested_scopes: ['openid', 'profile'],
      acr_values: ['1'],
      tenant: 'acme',
      idp: 'corp-ad',
      binding_message: 'W4SCT',
      status: 'pending',
      interval_seconds: 5,
      last_polled_at: null,
    })
    expect(JSON.stringify(rows[0])).not.toContain(body.auth_req_id)
    // 128 random bits in hex: never starts with '-', so `authz ciba approve ID` cannot read it as an option.
    expect(rows[0]!.id).toMatch(/^[0-9a-f]{32}$/)
    const n = authz.notifications.at(-1)!
    expect(n).toEqual({
      request_id: rows[0]!.id,
      subject: 'u-alice',
      username: 'alice',
      client_id: 'bank',
      client_name: 'Bank <App>',
      scopes: ['openid', 'profile'],
      binding_message: 'W4SCT',
      acr_values: ['1', 'tenant:acme', 'idp:corp-ad'],
      expires_at: Math.floor(authz.clock.now() / 1000) + 120,
      approval_url: `${TEST_ISSUER}/ciba/approve?request=${rows[0]!.id}`,
    })
  })

  it('honours requested_expiry up to the cap, uses the server defaults for a client without its own, and accepts Basic', async () => {
    expect((await startCiba(authz, { ...ok, requested_expiry: '30' })).json()).toMatchObject({ expires_in: 30, interval: 5 })
    expect((await startCiba(authz, { ...ok, requested_expiry: '120' })).json()).toMatchObject({ expires_in: 120 })
    const res = await startCiba(
      authz,
      { scope: 'openid', login_hint: 'alice@EXAMPLE.com' },
      { authorization: basic('plain', 'plain-secret') },
    )
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ expires_in: 300, interval: 5 })
  })

  it('refuses an idp: value the client may not use, resolves login_hint by subject id', async () => {
    await expectError(
      { ...ok, login_hint: 'u-alice', acr_values: 'idp:google' },
      400,
      'invalid_request',
      'acr_values holds an idp this client may not assert',
    )
    expect((await startCiba(authz, { ...ok, login_hint: 'u-alice', acr_values: 'idp:corp-ad' })).statusCode).toBe(200)
    const { rows } = await authz.db.query<{ subject_id: string; idp: string | null; acr_values: string[] }>(
      'SELECT subject_id, idp, acr_values FROM ciba_requests ORDER BY created_at DESC, id LIMIT 1',
    )
    expect(rows).toEqual([{ subject_id: 'u-alice', idp: 'corp-ad', acr_values: [] }])
  })

  it('publishes the CIBA metadata in discovery', async () => {
    const doc = (await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json()
    expect(doc).toMatchObject({
      backchannel_authentication_endpoint: `${TEST_ISSUER}/connect/ciba`,
      backchannel_token_delivery_modes_supported: ['poll', 'ping', 'push'],
      backchannel_user_code_parameter_supported: true,
      backchannel_authentication_request_signing_alg_values_supported: ['ES256', 'PS256', 'RS256'],
    })
    expect(doc.grant_types_supported).toContain('urn:openid:params:grant-type:ciba')
  })
})

describe('POST /connect/ciba errors', () => {
  it('client authentication and grant', async () => {
    await expectError({ ...ok, client_secret: 'wrong' }, 401, 'invalid_client', expect.any(String))
    await expectError({ client_id: 'public', scope: 'openid', login_hint: 'alice' }, 401, 'invalid_client', expect.any(String))
    await expectError(
      { client_id: 'cc-only', client_secret: 'cc-secret', scope: 'openid', login_hint: 'alice' },
      400,
      'unauthorized_client',
      'the client may not use CIBA',
    )
  })

  it('scope', async () => {
    await expectError({ ...BANK, login_hint: 'alice' }, 400, 'invalid_request', 'scope is required')
    await expectError({ ...ok, scope: 'profile' }, 400, 'invalid_request', 'scope must include openid')
    await expectError({ ...ok, scope: 'openid orders.write' }, 400, 'invalid_scope', 'scope holds a value this client may not request')
    await expectError({ ...ok, scope: 'openid nope' }, 400, 'invalid_scope', 'scope holds a value this client may not request')
  })

  it('hints', async () => {
    const one = 'exactly one of login_hint, id_token_hint and login_hint_token is required'
    await expectError({ ...BANK, scope: 'openid' }, 400, 'invalid_request', one)
    await expectError({ ...ok, id_token_hint: 'x.y.z' }, 400, 'invalid_request', one)
    await expectError({ ...ok, login_hint: 'nobody' }, 400, 'unknown_user_id', 'the hint names no known user')
    await expectError({ ...ok, login_hint: 'carol' }, 400, 'unknown_user_id', 'the hint names no known user')
  })

  it('binding_message', async () => {
    await expectError(
      { ...ok, binding_message: 'x'.repeat(65) },
      400,
      'invalid_binding_message',
      'binding_message is longer than 64 characters',
    )
    await expectError({ ...ok, binding_message: 'a\nb' }, 400, 'invalid_binding_message', 'binding_message contains control characters')
    expect((await startCiba(authz, { ...ok, binding_message: '🙂'.repeat(64) })).statusCode).toBe(200)
  })

  it('user_code', async () => {
    await expectError({ ...ok, login_hint: 'bob' }, 400, 'missing_user_code', 'this user requires a user_code')
    await expectError({ ...ok, login_hint: 'bob', user_code: '0000' }, 400, 'invalid_user_code', 'the user_code is wrong')
    expect((await startCiba(authz, { ...ok, login_hint: 'bob', user_code: '4711' })).statusCode).toBe(200)
  })

  it('requested_expiry', async () => {
    const bad = 'requested_expiry must be a positive integer'
    for (const v of ['0', '-5', '1.5', 'abc', '010', '1e3']) await expectError({ ...ok, requested_expiry: v }, 400, 'invalid_request', bad)
    await expectError({ ...ok, requested_expiry: '121' }, 400, 'invalid_request', 'requested_expiry must not exceed 120 seconds')
  })

  it('resource', async () => {
    await expectError({ ...ok, resource: 'https://nope.example' }, 400, 'invalid_target', 'unknown resource')
    expect((await startCiba(authz, { ...ok, scope: 'openid orders.read', resource: 'orders-api' })).statusCode).toBe(200)
  })

  it('a request refused by policy is 403 access_denied (too many pending requests from one client for one user)', async () => {
    await authz.db.query(`DELETE FROM ciba_requests`)
    // 12 s apart, within the rate of 5 a minute (CIBA_RATE_LIMIT_PER_USER); all 10 still pending at the 11th.
    for (let i = 0; i < 10; i++) {
      if (i > 0) authz.clock.advance(12)
      expect((await startCiba(authz, { ...ok, login_hint: 'alice' })).statusCode).toBe(200)
    }
    await expectError(ok, 403, 'access_denied', 'too many pending requests from this client for this user')
    await authz.db.query(`DELETE FROM ciba_requests`)
  })

  it('id_token_hint: ours, for this client, expired accepted; foreign or for another client refused', async () => {
    const keys = authz.app.authz.keys
    const now = Math.floor(authz.clock.now() / 1000)
    const idt = (claims: Record<string, unknown>) =>
      keys.sign(
        { iss: TEST_ISSUER, sub: 'u-alice', aud: 'bank', iat: now - 7200, exp: now - 3600, ...claims },
        { alg: 'RS256', typ: 'JWT' },
      )
    expect((await startCiba(authz, { ...BANK, scope: 'openid', id_token_hint: await idt({}) })).statusCode).toBe(200)
    await expectError(
      { ...BANK, scope: 'openid', id_token_hint: await idt({ aud: 'plain' }) },
      400,
      'invalid_request',
      'id_token_hint was not issued to this client',
    )
    await expectError(
      { ...BANK, scope: 'openid', id_token_hint: await idt({ sub: 'u-nobody' }) },
      400,
      'unknown_user_id',
      'the hint names no known user',
    )
    const foreign = await signJwt(authz, authz.clientKey, { iss: TEST_ISSUER, sub: 'u-alice', aud: 'bank' })
    await expectError(
      { ...BANK, scope: 'openid', id_token_hint: foreign },
      400,
      'invalid_request',
      'id_token_hint is not an ID token issued by this server',
    )
    // Another JWT we signed whose claims would pass (an access token naming the client) is no ID token.
    const accessToken = await keys.sign(
      { iss: TEST_ISSUER, sub: 'u-alice', aud: 'bank', iat: now, exp: now + 60 },
      { alg: 'ES256', typ: 'at+jwt' },
    )
    await expectError(
      { ...BANK, scope: 'openid', id_token_hint: accessToken },
      400,
      'invalid_request',
      'id_token_hint is not an ID token issued by this server',
    )
  })

  it('login_hint_token: signed with the client key, sub or login_hint; expired; wrong key', async () => {
    expect(
      (await startCiba(authz, { ...BANK, scope: 'openid', login_hint_token: await lht(authz.clientKey, { sub: 'alice@example.com' }) }))
        .statusCode,
    ).toBe(200)
    expect(
      (await startCiba(authz, { ...BANK, scope: 'openid', login_hint_token: await lht(authz.clientKey, { login_hint: 'alice' }) }))
        .statusCode,
    ).toBe(200)
    const expired = await lht(authz.clientKey, { sub: 'alice' }, { lifetime: 10 })
    authz.clock.advance(100)
    await expectError(
      { ...BANK, scope: 'openid', login_hint_token: expired },
      400,
      'expired_login_hint_token',
      'the login_hint_token has expired',
    )
    await expectError(
      { ...BANK, scope: 'openid', login_hint_token: await lht(authz.otherKey, { sub: 'alice' }) },
      400,
      'invalid_request',
      'invalid login_hint_token: no registered key matches',
    )
    await expectError(
      { ...BANK, scope: 'openid', login_hint_token: await lht(authz.clientKey, { sub: 'nobody' }) },
      400,
      'unknown_user_id',
      'the hint names no known user',
    )
    await expectError(
      { ...BANK, scope: 'openid', login_hint_token: await lht(authz.clientKey, { foo: 'x' }) },
      400,
      'invalid_request',
      'invalid login_hint_token: it names no user (sub or login_hint)',
    )
    await expectError(
      {
        client_id: 'plain',
        client_secret: 'plain-secret',
        scope: 'openid',
        login_hint_token: await lht(authz.clientKey, { sub: 'alice' }),
      },
      400,
      'invalid_request',
      'invalid login_hint_token: the client has no registered public keys',
    )
    await authz.db.query(`DELETE FROM ciba_requests`)
  })

  it('not a form POST', async () => {
    const res = await authz.app.inject({
      method: 'POST',
      url: '/connect/ciba',
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('invalid_request')
  })
})
