import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, TEST_ISSUER, type TestApp } from '../../helpers/app.js'

let authz: TestApp
beforeAll(async () => {
  authz = await createTestApp()
})
afterAll(() => authz.close())

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']

describe('JWKS', () => {
  it('publishes the public parts of one RS256 and one ES256 key, cacheable', async () => {
    const res = await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration/jwks' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.headers['cache-control']).toBe('public, max-age=300')
    const { keys } = res.json<{ keys: Array<Record<string, unknown>> }>()
    expect(keys.map((k) => k.alg).sort()).toEqual(['ES256', 'RS256'])
    for (const k of keys) {
      for (const m of PRIVATE_MEMBERS) expect(k).not.toHaveProperty(m)
      expect(k.use).toBe('sig')
      expect(k.kid).toMatch(/^[A-Za-z0-9_-]{43}$/)
    }
    const ec = keys.find((k) => k.alg === 'ES256')!
    expect(Object.keys(ec).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y'])
    expect(ec).toMatchObject({ kty: 'EC', crv: 'P-256' })
    const rsa = keys.find((k) => k.alg === 'RS256')!
    expect(Object.keys(rsa).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use'])
    expect(Buffer.from(rsa.n as string, 'base64url').length).toBe(256) // 2048 bits
  })

  it('verifies what sign() produces with jose against the published JWKS', async () => {
    const res = await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration/jwks' })
    const jwks = createLocalJWKSet(res.json<JSONWebKeySet>())
    const now = Math.floor(authz.clock.now() / 1000)
    for (const alg of ['ES256', 'RS256'] as const) {
      const jwt = await authz.app.authz.keys.sign({ iss: TEST_ISSUER, sub: 'backend', iat: now, exp: now + 60 }, { alg, typ: 'at+jwt' })
      const { payload, protectedHeader } = await jwtVerify(jwt, jwks, { currentDate: new Date(authz.clock.now()), typ: 'at+jwt' })
      expect(payload).toEqual({ iss: TEST_ISSUER, sub: 'backend', iat: now, exp: now + 60 })
      expect(protectedHeader.alg).toBe(alg)
    }
  })
})

describe('discovery document', () => {
  it('names the issuer, endpoints, keys and catalogue; claims nothing unimplemented; cacheable', async () => {
    await authz.db.query(`INSERT INTO identity_resources (name, claims) VALUES ('openid', '{sub}'), ('email', '{email,email_verified}'),
      ('disabled', '{secret_claim}')`)
    await authz.db.query(`UPDATE identity_resources SET enabled = false WHERE name = 'disabled'`)
    await authz.db.query(`INSERT INTO api_scopes (name) VALUES ('orders.read')`)
    const res = await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.headers['cache-control']).toBe('public, max-age=300')
    const doc = res.json<Record<string, unknown>>()
    // Members other features contribute (grant types, introspection, revocation…) are theirs to test.
    const mine = Object.fromEntries(Object.entries(doc).filter(([k]) => OWN_MEMBERS.includes(k)))
    expect(mine).toEqual({
      issuer: TEST_ISSUER,
      jwks_uri: `${TEST_ISSUER}/.well-known/openid-configuration/jwks`,
      token_endpoint: `${TEST_ISSUER}/connect/token`,
      // with the assertion methods of src/client-auth/ (test/client-auth/assertion.test.ts)
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none', 'client_secret_jwt', 'private_key_jwt'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256', 'ES256'],
      scopes_supported: ['email', 'openid', 'orders.read'],
      claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'acr', 'amr', 'sid', 'email', 'email_verified'],
    })
    // The authorization code flow (OIDC Discovery §3: authorization_endpoint and response_types_supported are required).
    expect(doc).toMatchObject({
      authorization_endpoint: `${TEST_ISSUER}/connect/authorize`,
      response_types_supported: ['code'],
      response_modes_supported: ['query', 'form_post'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      request_parameter_supported: true,
      request_uri_parameter_supported: false,
      request_object_signing_alg_values_supported: ['PS256', 'ES256', 'RS256'],
    })
  })
})

const OWN_MEMBERS = [
  'issuer',
  'jwks_uri',
  'token_endpoint',
  'token_endpoint_auth_methods_supported',
  'subject_types_supported',
  'id_token_signing_alg_values_supported',
  'scopes_supported',
  'claims_supported',
]
