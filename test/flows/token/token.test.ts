import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { basic, createTestApp, FORM, TEST_ISSUER, type TestApp } from '../../helpers/app.js'
import { postForm } from '../../helpers/http.js'
import { CC, seedTokens } from './token-fixtures.js'

let authz: TestApp
beforeAll(async () => {
  authz = await createTestApp()
  await seedTokens(authz)
})
afterAll(() => authz.close())

const post = (params: Record<string, string>, headers: Record<string, string> = {}) =>
  postForm(authz.app, '/connect/token', params, headers)

function expectError(res: Awaited<ReturnType<typeof post>>, status: number, body: Record<string, string>) {
  expect({ status: res.statusCode, body: res.json() }).toEqual({ status, body })
  expect(res.headers['cache-control']).toBe('no-store')
  expect(res.headers.pragma).toBe('no-cache')
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
}

describe('client_credentials with JWT access tokens (RFC 9068)', () => {
  it('issues a token whose header and claims verify against the JWKS', async () => {
    const res = await post({ grant_type: CC, scope: 'orders.read billing.read' }, { authorization: basic('backend', 's3cret') })
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers.pragma).toBe('no-cache')
    const body = res.json()
    expect(body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, scope: 'orders.read billing.read' })
    const jwks = (await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration/jwks' })).json()
    const { payload, protectedHeader } = await jwtVerify(body.access_token, createLocalJWKSet(jwks), {
      issuer: TEST_ISSUER,
      typ: 'at+jwt',
      currentDate: new Date(authz.clock.now()),
    })
    expect(protectedHeader).toEqual({ alg: 'ES256', typ: 'at+jwt', kid: expect.any(String) })
    const iat = Math.floor(authz.clock.now() / 1000)
    expect(payload).toEqual({
      iss: TEST_ISSUER,
      sub: 'backend',
      client_id: 'backend',
      aud: ['orders-api', 'billing-api'],
      scope: 'orders.read billing.read',
      jti: expect.any(String),
      iat,
      nbf: iat,
      exp: iat + 3600,
    })
    const { rows } = await authz.db.query('SELECT count(*)::int AS n FROM persisted_grants')
    expect(rows[0]).toEqual({ n: 0 }) // no database write per JWT
  })

  it('grants every allowed API scope when scope is omitted, never identity scopes', async () => {
    const res = await post({ grant_type: CC, client_id: 'backend', client_secret: 's3cret' })
    expect(res.json().scope).toBe('orders.read orders.write billing.read lonely.scope stock.read')
    const claims = JSON.parse(Buffer.from(res.json().access_token.split('.')[1], 'base64url').toString())
    expect(claims.aud).toEqual(['orders-api', 'billing-api'])
  })

  it('uses a single-string aud for one API, restricts to the resource (RFC 8707)', async () => {
    const res = await post(
      { grant_type: CC, scope: 'orders.read billing.read', resource: 'billing-api' },
      { authorization: basic('backend', 's3cret') },
    )
    expect(res.statusCode).toBe(200)
    expect(res.json().scope).toBe('billing.read')
    const claims = JSON.parse(Buffer.from(res.json().access_token.split('.')[1], 'base64url').toString())
    expect(claims.aud).toBe('billing-api')
  })

  it('carries acr_values tenant:<name> as a tenant claim', async () => {
    const res = await post(
      { grant_type: CC, scope: 'orders.read', acr_values: 'idp:x tenant:acme' },
      { authorization: basic('backend', 's3cret') },
    )
    const claims = JSON.parse(Buffer.from(res.json().access_token.split('.')[1], 'base64url').toString())
    expect(claims.tenant).toBe('acme')
    expect(claims.aud).toBe('orders-api')
  })

  it('accepts any unexpired secret of the client (rotation) and percent-encoded Basic credentials', async () => {
    expect((await post({ grant_type: CC }, { authorization: basic('backend', 'next-secret') })).statusCode).toBe(200)
    expect((await post({ grant_type: CC }, { authorization: basic('odd id:é', 'p@ss:w%rd +é') })).statusCode).toBe(200)
    const both = await post({ grant_type: CC, client_id: 'backend' }, { authorization: basic('backend', 's3cret') })
    expect(both.statusCode).toBe(200)
  })

  it('stores a reference token by hash only', async () => {
    const res = await post({ grant_type: CC, scope: 'orders.read' }, { authorization: basic('ref-client', 'ref-secret') })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body).toEqual({
      access_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      token_type: 'Bearer',
      expires_in: 600,
      scope: 'orders.read',
    })
    const { rows } = await authz.db.query<{ kind: string; client_id: string; handle_hash: string }>(
      'SELECT kind, client_id, handle_hash FROM persisted_grants',
    )
    expect(rows).toHaveLength(1)
    expect(rows[0]!.kind).toBe('reference_token')
    expect(rows[0]!.handle_hash).not.toBe(body.access_token)
    // Tokens without a family cost no family row (the JWT test above wrote nothing at all).
    expect((await authz.db.query('SELECT count(*)::int AS n FROM grant_families')).rows).toEqual([{ n: 0 }])
  })
})

describe('client authentication (RFC 6749 §2.3.1, §5.2)', () => {
  const challenge = `Basic realm="${TEST_ISSUER}"`
  const failed = { error: 'invalid_client', error_description: 'client authentication failed' }

  it('401 with WWW-Authenticate for a bad secret in the header', async () => {
    const res = await post({ grant_type: CC }, { authorization: basic('backend', 'wrong') })
    expectError(res, 401, failed)
    expect(res.headers['www-authenticate']).toBe(challenge)
  })

  it('401 without WWW-Authenticate for a bad secret in the body', async () => {
    const res = await post({ grant_type: CC, client_id: 'backend', client_secret: 'wrong' })
    expectError(res, 401, failed)
    expect(res.headers['www-authenticate']).toBeUndefined()
  })

  it('401 for an unknown client, an expired secret and a disabled client', async () => {
    for (const [id, secret] of [
      ['nobody', 'x'],
      ['backend', 'old-secret'],
      ['disabled', 'disabled-secret'],
    ] as const) {
      const viaHeader = await post({ grant_type: CC }, { authorization: basic(id, secret) })
      expectError(viaHeader, 401, failed)
      expect(viaHeader.headers['www-authenticate']).toBe(challenge)
      expectError(await post({ grant_type: CC, client_id: id, client_secret: secret }), 401, failed)
    }
  })

  it('401 for a confidential client without a secret and for no credentials at all', async () => {
    expectError(await post({ grant_type: CC, client_id: 'backend' }), 401, failed)
    expectError(await post({ grant_type: CC }), 401, { error: 'invalid_client', error_description: 'client authentication is required' })
  })

  it('401 for malformed Basic credentials', async () => {
    const res = await post({ grant_type: CC }, { authorization: 'Basic !!!' })
    expectError(res, 401, { error: 'invalid_client', error_description: 'malformed Basic credentials' })
    expect(res.headers['www-authenticate']).toBe(challenge)
  })

  it('invalid_request for two methods and for a client_id that does not match the header', async () => {
    expectError(await post({ grant_type: CC, client_secret: 's3cret' }, { authorization: basic('backend', 's3cret') }), 400, {
      error: 'invalid_request',
      error_description: 'more than one client authentication method was used',
    })
    expectError(await post({ grant_type: CC, client_id: 'other' }, { authorization: basic('backend', 's3cret') }), 400, {
      error: 'invalid_request',
      error_description: 'client_id does not match the Authorization header',
    })
  })

  it('a public client may not use client_credentials', async () => {
    expectError(await post({ grant_type: CC, client_id: 'public-app' }), 400, {
      error: 'unauthorized_client',
      error_description: 'public clients may not use this grant type',
    })
  })
})

describe('grant registry and parameters', () => {
  const auth = { authorization: basic('backend', 's3cret') }
  it('missing, unknown and disallowed grant types', async () => {
    expectError(await post({}, auth), 400, { error: 'invalid_request', error_description: 'grant_type is required' })
    expectError(await post({ grant_type: 'urn:example:no-such-grant' }, auth), 400, { error: 'unsupported_grant_type' })
    expectError(await post({ grant_type: 'password', username: 'alice', password: 'x' }, auth), 400, {
      error: 'unauthorized_client',
      error_description: 'the client may not use this grant type',
    })
    expectError(await post({ grant_type: CC }, { authorization: basic('ciba-only', 'ciba-secret') }), 400, {
      error: 'unauthorized_client',
      error_description: 'the client may not use this grant type',
    })
  })

  it('rejects repeated, empty and over-long parameters and non-form bodies', async () => {
    const rep = await authz.app.inject({
      method: 'POST',
      url: '/connect/token',
      headers: { ...FORM, ...auth },
      payload: 'grant_type=client_credentials&scope=a&scope=b',
    })
    expectError(rep, 400, { error: 'invalid_request', error_description: 'parameter scope is repeated' })
    expectError(await post({ grant_type: CC, scope: '' }, auth), 400, {
      error: 'invalid_request',
      error_description: 'parameter scope is empty',
    })
    expectError(await post({ grant_type: CC, scope: 'x'.repeat(301) }, auth), 400, {
      error: 'invalid_request',
      error_description: 'scope is too long',
    })
    expectError(await post({ grant_type: CC, foo: 'x'.repeat(101) }, auth), 400, {
      error: 'invalid_request',
      error_description: 'a parameter is too long',
    })
    expectError(await post({ grant_type: CC, resource: 'x'.repeat(513) }, auth), 400, {
      error: 'invalid_request',
      error_description: 'resource is too long',
    })
    const json = await authz.app.inject({
      method: 'POST',
      url: '/connect/token',
      headers: { 'content-type': 'application/json', ...auth },
      payload: '{"grant_type":"client_credentials"}',
    })
    expectError(json, 400, { error: 'invalid_request', error_description: 'the request body must be application/x-www-form-urlencoded' })
  })

  it('ignores unknown parameters', async () => {
    expect((await post({ grant_type: CC, scope: 'orders.read', whatever: '1' }, auth)).statusCode).toBe(200)
  })
})

describe('scopes and resources', () => {
  const auth = { authorization: basic('backend', 's3cret') }
  it('invalid_scope for unknown, not allowed, identity and offline_access scopes', async () => {
    expectError(await post({ grant_type: CC, scope: 'nope' }, auth), 400, {
      error: 'invalid_scope',
      error_description: 'scope holds a value this client may not request',
    })
    expectError(await post({ grant_type: CC, scope: 'orders.read profile' }, auth), 400, {
      error: 'invalid_scope',
      error_description: 'scope holds a value this client may not request',
    })
    expectError(await post({ grant_type: CC, scope: 'openid' }, auth), 400, {
      error: 'invalid_scope',
      error_description: 'scope holds an OpenID Connect scope, which this grant does not allow',
    })
    expectError(
      await post({ grant_type: CC, scope: 'orders.read offline_access' }, { authorization: basic('offline', 'offline-secret') }),
      400,
      { error: 'invalid_scope', error_description: 'scope offline_access is not allowed for this client or grant' },
    )
    expectError(await post({ grant_type: CC }, { authorization: basic('no-scopes', 'ns-secret') }), 400, {
      error: 'invalid_scope',
      error_description: 'no scope requested and none allowed by default',
    })
  })

  it('invalid_target for unknown, disabled and unusable resources', async () => {
    expectError(await post({ grant_type: CC, resource: 'nowhere' }, auth), 400, {
      error: 'invalid_target',
      error_description: 'unknown resource',
    })
    expectError(await post({ grant_type: CC, resource: 'stock-api' }, auth), 400, {
      error: 'invalid_target',
      error_description: 'unknown resource',
    })
    expectError(await post({ grant_type: CC, scope: 'orders.read', resource: 'billing-api' }, auth), 400, {
      error: 'invalid_target',
      error_description: 'the resource accepts none of the requested scopes',
    })
  })

  it('a scope of a disabled API resource yields no aud for it', async () => {
    const res = await post({ grant_type: CC, scope: 'stock.read lonely.scope' }, auth)
    expect(res.statusCode).toBe(200)
    const claims = JSON.parse(Buffer.from(res.json().access_token.split('.')[1], 'base64url').toString())
    expect(claims.aud).toBeUndefined()
    expect(decodeProtectedHeader(res.json().access_token).typ).toBe('at+jwt')
  })
})
