// DPoP at the token endpoint (RFC 9449 §4.3, §5): every check of a proof, what a valid one binds
// (cnf.jkt in JWT access tokens, the reference token's row, a public client's refresh token),
// requireDPoP, and what introspection tells an API about the binding (§6.2).
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import { basic, createTestApp, TEST_ISSUER, type TestApp } from '../../helpers/app.js'
import { postForm } from '../../helpers/http.js'
import { dpopKey, proof, TOKEN_URL, type DPoPKey } from './proof.js'

const CC = 'client_credentials'
let authz: TestApp
let key: DPoPKey
beforeAll(async () => {
  authz = await createTestApp()
  await applySeed(authz.db, {
    apiScopes: [{ name: 'orders.read' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read'], secrets: [{ value: 'api-secret' }] }],
    identityResources: ['openid', 'offline_access'],
    clients: [
      {
        clientId: 'svc',
        secrets: [{ value: 'svc-secret' }],
        allowedGrantTypes: [CC, 'password'],
        allowedScopes: ['orders.read', 'openid', 'offline_access'],
        allowOfflineAccess: true,
      },
      {
        clientId: 'svc-ref',
        secrets: [{ value: 'ref-secret' }],
        allowedGrantTypes: [CC],
        allowedScopes: ['orders.read'],
        accessTokenType: 'reference',
      },
      {
        clientId: 'strict',
        secrets: [{ value: 'strict-secret' }],
        allowedGrantTypes: [CC],
        allowedScopes: ['orders.read'],
        requireDPoP: true,
      },
      {
        clientId: 'spa',
        requireClientSecret: false,
        allowedGrantTypes: ['password'],
        allowedScopes: ['orders.read', 'openid', 'offline_access'],
        allowOfflineAccess: true,
      },
    ],
    users: [{ subjectId: 'u-alice', username: 'alice', password: 'alice-pw' }],
  })
  key = await dpopKey()
})
afterAll(() => authz?.close())

const token = (params: Record<string, string>, headers: Record<string, string> = {}) =>
  postForm(authz.app, '/connect/token', params, headers)
const cc = (client: string, secret: string, dpop?: string) =>
  token({ grant_type: CC, scope: 'orders.read' }, { authorization: basic(client, secret), ...(dpop ? { dpop } : {}) })
const refused = (res: { statusCode: number; json(): unknown; headers: Record<string, unknown> }, error: string) => {
  expect(res.statusCode).toBe(400)
  expect(res.headers['cache-control']).toBe('no-store')
  expect((res.json() as { error: string }).error).toBe(error)
}

describe('DPoP at the token endpoint: what a valid proof binds', () => {
  it('client_credentials with a proof: token_type DPoP and cnf.jkt of the key in the JWT', async () => {
    const res = await cc('svc', 'svc-secret', await proof(authz, key))
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body).toEqual({ access_token: expect.any(String), token_type: 'DPoP', expires_in: 3600, scope: 'orders.read' })
    expect(decodeJwt(body.access_token).cnf).toEqual({ jkt: key.jkt })
    expect(res.headers['dpop-nonce']).toBeUndefined() // nonces are not required by default
  })

  it('without a proof nothing changes: a Bearer token without cnf', async () => {
    const res = await cc('svc', 'svc-secret')
    expect(res.json().token_type).toBe('Bearer')
    expect(decodeJwt(res.json().access_token).cnf).toBeUndefined()
  })

  it('a reference token keeps its binding: introspection answers cnf and token_type DPoP, JSON and JWT', async () => {
    const res = await cc('svc-ref', 'ref-secret', await proof(authz, key))
    expect(res.json().token_type).toBe('DPoP')
    const at = res.json().access_token as string
    const introspect = (accept?: string) =>
      postForm(
        authz.app,
        '/connect/introspect',
        { token: at },
        { authorization: basic('orders-api', 'api-secret'), ...(accept ? { accept } : {}) },
      )
    const json = await introspect()
    expect(json.statusCode).toBe(200)
    expect(json.json()).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: key.jkt }, client_id: 'svc-ref' })
    const jwt = await introspect('application/token-introspection+jwt')
    expect(decodeJwt(jwt.body).token_introspection).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: key.jkt } })
    const bearer = (await cc('svc-ref', 'ref-secret')).json().access_token as string
    const plain = await postForm(authz.app, '/connect/introspect', { token: bearer }, { authorization: basic('orders-api', 'api-secret') })
    expect(plain.json().token_type).toBe('Bearer')
    expect(plain.json().cnf).toBeUndefined()
  })

  it('requireDPoP: a token request without a proof is invalid_dpop_proof, with one it is bound', async () => {
    const res = await cc('strict', 'strict-secret')
    refused(res, 'invalid_dpop_proof')
    expect(res.json()).toEqual({ error: 'invalid_dpop_proof', error_description: 'a DPoP proof is required for this client' })
    const ok = await cc('strict', 'strict-secret', await proof(authz, key))
    expect(ok.statusCode).toBe(200)
    expect(ok.json().token_type).toBe('DPoP')
  })

  it("the password grant binds the access token, and a confidential client's refresh token stays unbound", async () => {
    const res = await token(
      { grant_type: 'password', username: 'alice', password: 'alice-pw', scope: 'openid orders.read offline_access' },
      { authorization: basic('svc', 'svc-secret'), dpop: await proof(authz, key) },
    )
    expect(res.statusCode).toBe(200)
    expect(res.json().token_type).toBe('DPoP')
    expect(decodeJwt(res.json().access_token).cnf).toEqual({ jkt: key.jkt })
    const intro = await postForm(
      authz.app,
      '/connect/introspect',
      { token: res.json().refresh_token },
      { authorization: basic('svc', 'svc-secret') },
    )
    expect(intro.json().active).toBe(true)
    expect(intro.json().cnf).toBeUndefined()
  })
})

describe('DPoP at the token endpoint: refused proofs are 400 invalid_dpop_proof', () => {
  const cases: Array<[string, () => Promise<string>]> = [
    ['a replayed jti', async () => 'replay'],
    ['another URL (htu)', () => proof(authz, key, { htu: `${TEST_ISSUER}/connect/userinfo` })],
    ['another host (htu)', () => proof(authz, key, { htu: 'https://evil.example/connect/token' })],
    ['another method (htm)', () => proof(authz, key, { htm: 'GET' })],
    ['an iat 61 s in the past', () => proof(authz, key, { iat: Math.floor(authz.clock.now() / 1000) - 61 })],
    ['an iat 61 s in the future', () => proof(authz, key, { iat: Math.floor(authz.clock.now() / 1000) + 61 })],
    ['no jti', () => proof(authz, key, { omit: ['jti'] })],
    ['no iat', () => proof(authz, key, { omit: ['iat'] })],
    ['typ JWT', () => proof(authz, key, { header: { typ: 'JWT' } })],
    ['a private jwk', async () => proof(authz, key, { header: { jwk: { ...key.jwk, d: 'AAAA' } } })],
    ['no jwk', () => proof(authz, key, { header: { jwk: undefined } })],
    ['a jwk of another key', async () => proof(authz, key, { header: { jwk: (await dpopKey()).jwk } })],
    ['not a JWT', async () => 'not-a-jwt'],
    [
      'alg none',
      async () => {
        const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')
        return `${enc({ alg: 'none', typ: 'dpop+jwt', jwk: key.jwk })}.${enc({ jti: 'x', htm: 'POST', htu: TOKEN_URL, iat: Math.floor(authz.clock.now() / 1000) })}.`
      },
    ],
  ]
  it.each(cases)('%s', async (name, make) => {
    let value: string
    if (name === 'a replayed jti') {
      value = await proof(authz, key)
      expect((await cc('svc', 'svc-secret', value)).statusCode).toBe(200)
    } else value = await make()
    const res = await cc('svc', 'svc-secret', value)
    refused(res, 'invalid_dpop_proof')
    expect(res.json().error_description).toMatch(/^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/)
    expect(res.body).not.toContain(value.slice(0, 20))
  })

  it('two DPoP headers are refused', async () => {
    const res = await authz.app.inject({
      method: 'POST',
      url: '/connect/token',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basic('svc', 'svc-secret'),
        dpop: [await proof(authz, key), await proof(authz, key)],
      },
      payload: 'grant_type=client_credentials&scope=orders.read',
    })
    refused(res, 'invalid_dpop_proof')
  })

  it('a query or fragment in htu, and another case of the host, are accepted (§4.3 item 9)', async () => {
    const res = await cc('svc', 'svc-secret', await proof(authz, key, { htu: `${TOKEN_URL.replace('authz.test', 'AUTHZ.test')}?x=1#f` }))
    expect(res.statusCode).toBe(200)
  })

  it('an iat moved out of the window by the clock: accepted now, refused 61 s later', async () => {
    const p = await proof(authz, key)
    authz.clock.advance(61)
    refused(await cc('svc', 'svc-secret', p), 'invalid_dpop_proof')
    expect((await cc('svc', 'svc-secret', await proof(authz, key))).statusCode).toBe(200)
  })

  it('a failed client authentication costs no jti: the same proof works once the client is right', async () => {
    const p = await proof(authz, key)
    const bad = await cc('svc', 'wrong', p)
    expect(bad.statusCode).toBe(401)
    expect((await cc('svc', 'svc-secret', p)).statusCode).toBe(200)
  })

  it('RS256 and EdDSA keys are accepted as well', async () => {
    for (const alg of ['RS256', 'PS256', 'EdDSA']) {
      const k = await dpopKey(alg)
      const res = await cc('svc', 'svc-secret', await proof(authz, k))
      expect(res.statusCode, alg).toBe(200)
      expect(decodeJwt(res.json().access_token).cnf, alg).toEqual({ jkt: k.jkt })
    }
  })
})

describe("a public client's refresh token is bound to its key (§5)", () => {
  async function bound(): Promise<string> {
    const res = await token(
      { grant_type: 'password', client_id: 'spa', username: 'alice', password: 'alice-pw', scope: 'openid orders.read offline_access' },
      { dpop: await proof(authz, key) },
    )
    expect(res.statusCode).toBe(200)
    expect(res.json().token_type).toBe('DPoP')
    return res.json().refresh_token as string
  }
  const refresh = async (rt: string, dpop?: string) =>
    token({ grant_type: 'refresh_token', client_id: 'spa', refresh_token: rt }, dpop ? { dpop } : {})

  it('a stolen refresh token without the key is refused and changes nothing; with the key it rotates, still bound', async () => {
    const rt = await bound()
    const stolen = await refresh(rt)
    refused(stolen, 'invalid_dpop_proof')
    expect(stolen.json().error_description).toBe('a DPoP proof is required: the refresh token is bound to a key')
    const thief = await refresh(rt, await proof(authz, await dpopKey()))
    refused(thief, 'invalid_grant')
    const ok = await refresh(rt, await proof(authz, key))
    expect(ok.statusCode).toBe(200)
    expect(ok.json().token_type).toBe('DPoP')
    expect(decodeJwt(ok.json().access_token).cnf).toEqual({ jkt: key.jkt })
    // The rotated token is bound too: a proof of the key is needed again.
    const next = ok.json().refresh_token as string
    refused(await refresh(next), 'invalid_dpop_proof')
    expect((await refresh(next, await proof(authz, key))).statusCode).toBe(200)
  })

  it('a refresh token issued without a proof stays usable without one', async () => {
    const res = await token({
      grant_type: 'password',
      client_id: 'spa',
      username: 'alice',
      password: 'alice-pw',
      scope: 'orders.read offline_access',
    })
    expect(res.json().token_type).toBe('Bearer')
    const ok = await refresh(res.json().refresh_token)
    expect(ok.statusCode).toBe(200)
    expect(ok.json().token_type).toBe('Bearer')
  })
})

describe('discovery', () => {
  it('lists dpop_signing_alg_values_supported', async () => {
    const res = await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })
    expect(res.json().dpop_signing_alg_values_supported).toEqual([
      'ES256',
      'ES384',
      'ES512',
      'PS256',
      'PS384',
      'PS512',
      'RS256',
      'RS384',
      'RS512',
      'EdDSA',
      'Ed25519',
    ])
  })
})
