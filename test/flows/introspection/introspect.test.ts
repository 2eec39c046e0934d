import { compactVerify, createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { basic, createTestApp, TEST_ISSUER, type TestApp } from '../../helpers/app.js'
import { postForm, postFormBasic } from '../../helpers/http.js'
import { CC, seedTokens } from '../token/token-fixtures.js'

let authz: TestApp
let jwt: string // backend: orders.read billing.read, tenant acme
let ref: string // ref-client: orders.read
beforeAll(async () => {
  authz = await createTestApp()
  await seedTokens(authz)
  jwt = (await token('backend', 's3cret', { scope: 'orders.read billing.read', acr_values: 'tenant:acme' })).access_token
  ref = (await token('ref-client', 'ref-secret', { scope: 'orders.read' })).access_token
})
afterAll(() => authz.close())

async function token(id: string, secret: string, params: Record<string, string>) {
  const res = await postFormBasic(authz.app, '/connect/token', { grant_type: CC, ...params }, id, secret)
  expect(res.statusCode).toBe(200)
  return res.json<{ access_token: string }>()
}

const introspect = (params: Record<string, string>, headers: Record<string, string> = {}) =>
  postForm(authz.app, '/connect/introspect', params, headers)
const asOrders = { authorization: basic('orders-api', 'orders-secret') }
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>

describe('introspection answers (RFC 7662 §2.2)', () => {
  it('shows an API resource the token with only its own scopes', async () => {
    const res = await introspect({ token: jwt }, asOrders)
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers.pragma).toBe('no-cache')
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    const c = claimsOf(jwt)
    expect(res.json()).toEqual({
      active: true,
      iss: TEST_ISSUER,
      sub: 'backend',
      client_id: 'backend',
      aud: ['orders-api', 'billing-api'],
      scope: 'orders.read',
      jti: c.jti,
      iat: c.iat,
      nbf: c.nbf,
      exp: c.exp,
      token_type: 'Bearer',
      tenant: 'acme',
    })
  })

  it('accepts API credentials in the form body and a second, unexpired secret', async () => {
    const res = await introspect({ token: jwt, client_id: 'billing-api', client_secret: 'billing-secret-2' })
    expect(res.json().scope).toBe('billing.read')
    expect((await introspect({ token: jwt }, { authorization: basic('billing-api', 'billing-secret') })).statusCode).toBe(401)
  })

  it('shows a client its own tokens with every scope, and nothing of other clients', async () => {
    const own = await introspect({ token: jwt, client_id: 'backend', client_secret: 's3cret' })
    expect(own.json()).toMatchObject({ active: true, scope: 'orders.read billing.read', client_id: 'backend' })
    expect((await introspect({ token: jwt }, { authorization: basic('other', 'other-secret') })).json()).toEqual({ active: false })
  })

  it('hides a token from an API none of whose scopes it carries', async () => {
    const ordersOnly = (await token('other', 'other-secret', { scope: 'orders.read' })).access_token
    expect((await introspect({ token: ordersOnly }, { authorization: basic('billing-api', 'billing-secret-2') })).json()).toEqual({
      active: false,
    })
  })

  it('introspects reference tokens with one lookup, whatever the hint', async () => {
    const res = await introspect({ token: ref, token_type_hint: 'refresh_token' }, asOrders)
    const body = res.json()
    expect(body).toEqual({
      active: true,
      iss: TEST_ISSUER,
      sub: 'ref-client',
      client_id: 'ref-client',
      aud: 'orders-api',
      scope: 'orders.read',
      jti: expect.any(String),
      iat: expect.any(Number),
      nbf: expect.any(Number),
      exp: body.iat + 600,
      token_type: 'Bearer',
    })
  })

  it('answers exactly {"active":false} for unknown, malformed and foreign-signed tokens', async () => {
    const foreign = `${jwt.split('.').slice(0, 2).join('.')}.${Buffer.alloc(64).toString('base64url')}`
    for (const token of ['nope', 'a.b.c', foreign, 'x'.repeat(5000), jwt.replace(/\.[^.]*$/, '')]) {
      const res = await introspect({ token }, asOrders)
      expect(res.statusCode).toBe(200)
      expect(res.body).toBe('{"active":false}')
    }
  })

  it('expired means expired: no clock skew grace', async () => {
    const short = (await token('ref-client', 'ref-secret', { scope: 'orders.read' })).access_token
    const long = (await token('other', 'other-secret', { scope: 'orders.read' })).access_token
    expect((await introspect({ token: long }, asOrders)).json().active).toBe(true)
    authz.clock.advance(600)
    expect((await introspect({ token: short }, asOrders)).body).toBe('{"active":false}')
    authz.clock.advance(3000)
    expect((await introspect({ token: long }, asOrders)).body).toBe('{"active":false}')
    authz.clock.advance(-3600)
  })
})

describe('introspection errors', () => {
  it('401 invalid_client as JSON, with WWW-Authenticate only for Basic', async () => {
    const viaHeader = await introspect({ token: jwt }, { authorization: basic('orders-api', 'wrong') })
    expect(viaHeader.statusCode).toBe(401)
    expect(viaHeader.headers['www-authenticate']).toBe(`Basic realm="${TEST_ISSUER}"`)
    expect(viaHeader.json()).toEqual({ error: 'invalid_client', error_description: 'caller authentication failed' })
    const none = await introspect({ token: jwt })
    expect(none.statusCode).toBe(401)
    expect(none.headers['www-authenticate']).toBeUndefined()
    expect(none.json()).toEqual({ error: 'invalid_client', error_description: 'caller authentication is required' })
    const disabled = await introspect({ token: jwt }, { authorization: basic('stock-api', 'stock-secret') })
    expect(disabled.statusCode).toBe(401)
  })

  it('400 invalid_request for a missing token and for a non-form body', async () => {
    const missing = await introspect({}, asOrders)
    expect(missing.statusCode).toBe(400)
    expect(missing.json()).toEqual({ error: 'invalid_request', error_description: 'token is required' })
    const json = await authz.app.inject({
      method: 'POST',
      url: '/connect/introspect',
      headers: { ...asOrders, 'content-type': 'application/json' },
      payload: '{}',
    })
    expect(json.statusCode).toBe(400)
    expect(json.json()).toEqual({
      error: 'invalid_request',
      error_description: 'the request body must be application/x-www-form-urlencoded',
    })
  })
})

describe('RFC 9701 JWT response', () => {
  const JWT_TYPE = 'application/token-introspection+jwt'
  it('signs the answer for the caller, verifiable with the JWKS', async () => {
    const res = await introspect({ token: jwt }, { ...asOrders, accept: `application/json;q=0.5, ${JWT_TYPE}` })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe(JWT_TYPE)
    expect(res.headers['cache-control']).toBe('no-store')
    const jwks = createLocalJWKSet((await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration/jwks' })).json())
    const { payload, protectedHeader } = await jwtVerify(res.body, jwks, {
      issuer: TEST_ISSUER,
      audience: 'orders-api',
      typ: 'token-introspection+jwt',
    })
    expect(protectedHeader).toEqual({ alg: 'ES256', typ: 'token-introspection+jwt', kid: expect.any(String) })
    const json = (await introspect({ token: jwt }, asOrders)).json()
    expect(payload).toEqual({ iss: TEST_ISSUER, aud: 'orders-api', iat: Math.floor(authz.clock.now() / 1000), token_introspection: json })
  })

  it('wraps an inactive answer and uses the client id as aud for a client caller', async () => {
    const res = await introspect({ token: 'nope' }, { authorization: basic('other', 'other-secret'), accept: JWT_TYPE })
    const jwks = createLocalJWKSet((await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration/jwks' })).json())
    const { payload } = await compactVerify(res.body, jwks)
    const claims = JSON.parse(new TextDecoder().decode(payload))
    expect(claims).toEqual({ iss: TEST_ISSUER, aud: 'other', iat: expect.any(Number), token_introspection: { active: false } })
    expect(decodeProtectedHeader(res.body).typ).toBe('token-introspection+jwt')
  })

  it('negotiates with q-values', async () => {
    const cases: Array<[string, string]> = [
      [JWT_TYPE, JWT_TYPE],
      [`${JWT_TYPE}, application/json`, JWT_TYPE],
      [`application/json, ${JWT_TYPE};q=0.9`, 'application/json; charset=utf-8'],
      [`${JWT_TYPE};q=0`, 'application/json; charset=utf-8'],
      ['*/*', 'application/json; charset=utf-8'],
      ['application/json', 'application/json; charset=utf-8'],
      [`text/html, ${JWT_TYPE};q=0.1, */*;q=0.05`, JWT_TYPE],
    ]
    for (const [accept, type] of cases) {
      const res = await introspect({ token: jwt }, { ...asOrders, accept })
      expect([accept, res.headers['content-type']]).toEqual([accept, type])
    }
  })

  it('discovery publishes the introspection and revocation members', async () => {
    const doc = (await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json()
    expect(doc).toMatchObject({
      introspection_endpoint: `${TEST_ISSUER}/connect/introspect`,
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      introspection_signing_alg_values_supported: ['ES256'],
      revocation_endpoint: `${TEST_ISSUER}/connect/revocation`,
      revocation_endpoint_auth_methods_supported: [
        'client_secret_basic',
        'client_secret_post',
        'client_secret_jwt',
        'private_key_jwt',
        'none',
      ],
    })
    expect(doc.grant_types_supported).toContain('client_credentials')
  })
})
