// A client seeded with profile "fapi2" (src/domain/client-profile.ts) as a client sees it: every
// requirement of the FAPI 2.0 Security Profile refused with the RFC's error when it is not met
// (no PAR, no DPoP proof, an RS256 assertion, proof or request object, an assertion's aud other
// than the issuer string, PKCE missing or plain, a code older than 60 seconds), and the same client
// when it meets them: ES256 ID tokens, refresh tokens kept. The seed's refusals too.
import { randomUUID } from 'node:crypto'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed, checkSeed } from '../../../src/seed/apply.js'
import { createTestApp, TEST_ISSUER, type TestApp } from '../../helpers/app.js'
import { postForm } from '../../helpers/http.js'
import { assertion, JWT_BEARER, newKey, type TestKey } from '../../../test/client-auth/assertion-fixtures.js'
import { authorizeSeed, located, pkcePair, session } from '../authorization-code/harness.js'
import { dpopKey, proof, type DPoPKey } from '../dpop/proof.js'

const CB = 'https://bank.example/cb'
let t: TestApp
let alice: string
let es256: TestKey
let rs256: TestKey
let dpop: DPoPKey

beforeAll(async () => {
  es256 = await newKey('es', 'ES256')
  rs256 = await newKey('rs', 'RS256')
  dpop = await dpopKey('ES256')
  const base = authorizeSeed()
  t = await createTestApp()
  await applySeed(t.db, {
    ...base,
    clients: [
      ...base.clients,
      {
        clientId: 'bank',
        profile: 'fapi2',
        tokenEndpointAuthMethod: 'private_key_jwt',
        jwks: { keys: [es256.publicJwk, rs256.publicJwk] },
        allowedGrantTypes: ['authorization_code', 'client_credentials'],
        allowedScopes: ['openid', 'profile', 'orders.read', 'offline_access'],
        allowOfflineAccess: true,
        redirectUris: [CB],
      },
    ],
  })
  alice = await session(t)
})
afterAll(() => t?.close())

/** The client's authentication: an assertion signed with `key` (ES256 unless told), audience the issuer. */
async function auth(key: TestKey = es256): Promise<Record<string, string>> {
  return { client_id: 'bank', client_assertion_type: JWT_BEARER, client_assertion: await assertion(t, key, 'bank') }
}

function request(challenge: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    response_type: 'code',
    redirect_uri: CB,
    scope: 'openid profile',
    state: 's-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  }
}

/** Pushes a request and follows it with alice's session; returns the code and its verifier. */
async function code(extra: Record<string, string> = {}): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkcePair()
  const pushed = await postForm(t.app, '/connect/par', { ...(await auth()), ...request(challenge, extra) })
  expect(pushed.statusCode).toBe(201)
  const { request_uri } = pushed.json<{ request_uri: string }>()
  const res = await t.app.inject({
    method: 'GET',
    url: `/connect/authorize?${new URLSearchParams({ client_id: 'bank', request_uri })}`,
    headers: { cookie: alice },
  })
  expect(res.statusCode).toBe(303)
  const back = Object.fromEntries(located(res).searchParams)
  expect(back).toEqual({ code: expect.any(String), state: 's-1', iss: TEST_ISSUER })
  return { code: back.code!, verifier }
}

async function redeem(c: { code: string; verifier: string }, headers: Record<string, string> = {}) {
  const form = { grant_type: 'authorization_code', code: c.code, redirect_uri: CB, code_verifier: c.verifier, ...(await auth()) }
  return postForm(t.app, '/connect/token', form, headers)
}

describe('a fapi2 client', () => {
  it('gets DPoP-bound tokens through PAR, private_key_jwt and PKCE S256', async () => {
    const res = await redeem(await code(), { dpop: await proof(t, dpop) })
    expect(res.statusCode).toBe(200)
    const body = res.json<{ token_type: string; access_token: string; id_token: string }>()
    expect(body.token_type).toBe('DPoP')
    const claims = JSON.parse(Buffer.from(body.access_token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>
    expect(claims.cnf).toEqual({ jkt: dpop.jkt })
  })

  it('gets ID tokens signed with ES256, never RS256 (FAPI 2.0 §5.4.1), verifiable with the published keys', async () => {
    const res = await redeem(await code(), { dpop: await proof(t, dpop) })
    const { id_token } = res.json<{ id_token: string }>()
    expect(decodeProtectedHeader(id_token)).toMatchObject({ alg: 'ES256', typ: 'JWT' })
    const jwks = (await t.app.inject({ url: '/.well-known/openid-configuration/jwks' })).json()
    const { payload } = await jwtVerify(id_token, createLocalJWKSet(jwks), { issuer: TEST_ISSUER, audience: 'bank', algorithms: ['ES256'] })
    expect(payload.sub).toBe('u-alice')
    const doc = (await t.app.inject({ url: '/.well-known/openid-configuration' })).json<Record<string, unknown>>()
    expect(doc.id_token_signing_alg_values_supported).toEqual(['RS256', 'ES256'])
  })

  it('must push its requests: a direct one goes back with invalid_request', async () => {
    const { challenge } = pkcePair()
    const url = `/connect/authorize?${new URLSearchParams({ client_id: 'bank', ...request(challenge) })}`
    const res = await t.app.inject({ method: 'GET', url, headers: { cookie: alice } })
    expect(res.statusCode).toBe(303)
    const back = located(res)
    expect(`${back.origin}${back.pathname}`).toBe(CB)
    expect(Object.fromEntries(back.searchParams)).toMatchObject({ error: 'invalid_request', state: 's-1', iss: TEST_ISSUER })
  })

  it('must use PKCE with S256: none or plain is invalid_request', async () => {
    const { challenge } = pkcePair()
    const none = request(challenge)
    delete none.code_challenge
    delete none.code_challenge_method
    const missing = await postForm(t.app, '/connect/par', { ...(await auth()), ...none })
    expect(missing.statusCode).toBe(400)
    expect(missing.json()).toEqual({ error: 'invalid_request', error_description: 'code_challenge is required (PKCE with S256)' })
    const plain = await postForm(t.app, '/connect/par', { ...(await auth()), ...request(challenge, { code_challenge_method: 'plain' }) })
    expect(plain.statusCode).toBe(400)
    expect(plain.json()).toEqual({ error: 'invalid_request', error_description: 'code_challenge_method must be S256' })
  })

  it('needs a DPoP proof at the token endpoint, of ES256 or PS256; the code survives a refusal', async () => {
    const c = await code()
    const without = await redeem(c)
    expect(without.statusCode).toBe(400)
    expect(without.json()).toEqual({ error: 'invalid_dpop_proof', error_description: 'a DPoP proof is required for this client' })
    const rsaKey = await dpopKey('RS256')
    const rsa = await redeem(c, { dpop: await proof(t, rsaKey) })
    expect(rsa.statusCode).toBe(400)
    expect(rsa.json()).toMatchObject({ error: 'invalid_dpop_proof' })
    expect((await redeem(c, { dpop: await proof(t, dpop) })).json()).toMatchObject({ token_type: 'DPoP' })
  })

  it('needs a DPoP proof for client_credentials too', async () => {
    const form = async () => ({ grant_type: 'client_credentials', scope: 'orders.read', ...(await auth()) })
    const without = await postForm(t.app, '/connect/token', await form())
    expect(without.statusCode).toBe(400)
    expect(without.json()).toMatchObject({ error: 'invalid_dpop_proof' })
    const bound = await postForm(t.app, '/connect/token', await form(), { dpop: await proof(t, dpop) })
    expect(bound.statusCode).toBe(200)
    expect(bound.json()).toMatchObject({ token_type: 'DPoP' })
  })

  it('may not authenticate with an RS256 assertion, even with a registered RSA key', async () => {
    const res = await postForm(
      t.app,
      '/connect/token',
      { grant_type: 'client_credentials', scope: 'orders.read', ...(await auth(rs256)) },
      {
        dpop: await proof(t, dpop),
      },
    )
    expect(res.statusCode).toBe(401)
    expect(res.json()).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' })
  })

  it('must name the issuer alone, as a string, as the aud of its assertions, at the token and PAR endpoints', async () => {
    const withAud = async (aud: string | string[]) => ({
      client_id: 'bank',
      client_assertion_type: JWT_BEARER,
      client_assertion: await assertion(t, es256, 'bank', { aud }),
    })
    const refused = { error: 'invalid_client', error_description: 'client authentication failed' }
    for (const aud of [[TEST_ISSUER], [TEST_ISSUER, 'https://elsewhere.example'], `${TEST_ISSUER}/connect/token`, `${TEST_ISSUER}/`]) {
      const token = await postForm(
        t.app,
        '/connect/token',
        { grant_type: 'client_credentials', scope: 'orders.read', ...(await withAud(aud)) },
        { dpop: await proof(t, dpop) },
      )
      expect({ aud, status: token.statusCode, body: token.json() }).toEqual({ aud, status: 401, body: refused })
    }
    const { challenge } = pkcePair()
    for (const aud of [[TEST_ISSUER], `${TEST_ISSUER}/connect/par`, `${TEST_ISSUER}/connect/token`]) {
      const par = await postForm(t.app, '/connect/par', { ...(await withAud(aud)), ...request(challenge) })
      expect({ aud, status: par.statusCode, body: par.json() }).toEqual({ aud, status: 401, body: refused })
    }
    const ok = await postForm(t.app, '/connect/par', { ...(await withAud(TEST_ISSUER)), ...request(challenge) })
    expect(ok.statusCode).toBe(201)
  })

  it('may not sign a request object with RS256', async () => {
    const now = Math.floor(t.clock.now() / 1000)
    const { challenge } = pkcePair()
    const jwt = await new SignJWT({ ...request(challenge), iss: 'bank', aud: TEST_ISSUER, nbf: now, exp: now + 60, jti: randomUUID() })
      .setProtectedHeader({ alg: 'RS256', kid: 'rs', typ: 'oauth-authz-req+jwt' })
      .sign(rs256.privateKey)
    const res = await postForm(t.app, '/connect/par', { ...(await auth()), request: jwt })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ error: 'invalid_request_object' })
  })

  it('keeps its refresh token: it is not rotated, so two refreshes with it both succeed (FAPI 2.0 §5.3.2.1)', async () => {
    const issued = await redeem(await code({ scope: 'openid offline_access' }), { dpop: await proof(t, dpop) })
    const { refresh_token } = issued.json<{ refresh_token: string }>()
    expect(refresh_token).toEqual(expect.any(String))
    for (let i = 0; i < 2; i++) {
      const form = { grant_type: 'refresh_token', refresh_token, ...(await auth()) }
      const res = await postForm(t.app, '/connect/token', form, { dpop: await proof(t, dpop) })
      expect({ i, status: res.statusCode }).toEqual({ i, status: 200 })
      expect(res.json()).toMatchObject({ token_type: 'DPoP', refresh_token })
    }
  })

  it('has codes that live 60 seconds (AUTHORIZATION_CODE_LIFETIME is 300)', async () => {
    const fresh = await code()
    t.clock.advance(59)
    expect((await redeem(fresh, { dpop: await proof(t, dpop) })).statusCode).toBe(200)
    const old = await code()
    t.clock.advance(61)
    const res = await redeem(old, { dpop: await proof(t, dpop) })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ error: 'invalid_grant' })
  })
})

describe('the seed', () => {
  const problems = (client: Record<string, unknown>) =>
    checkSeed({ clients: [{ clientId: 'c', profile: 'fapi2', allowedGrantTypes: ['client_credentials'], ...client }] }).problems

  it('refuses a fapi2 client that is public or does not use private_key_jwt, naming the field', async () => {
    const jwks = { keys: [(await newKey('k')).publicJwk] }
    expect(problems({ requireClientSecret: false })).toEqual([
      'clients[0].profile: client c: a fapi2 client must be confidential (FAPI 2.0 has no public clients): use tokenEndpointAuthMethod private_key_jwt',
    ])
    expect(problems({ secrets: [{ value: 's' }] })).toEqual([
      'clients[0].tokenEndpointAuthMethod: client c: a fapi2 client must use private_key_jwt (FAPI 2.0 Security Profile §5.3.2.1)',
    ])
    expect(problems({ secrets: [{ value: 's' }], tokenEndpointAuthMethod: 'client_secret_jwt' })).toEqual([
      'clients[0].tokenEndpointAuthMethod: client c: a fapi2 client must use private_key_jwt (FAPI 2.0 Security Profile §5.3.2.1)',
    ])
    expect(problems({ tokenEndpointAuthMethod: 'private_key_jwt', jwks, profile: 'fapi1' })).toEqual([
      'clients[0].profile: Invalid input: expected "fapi2"',
    ])
    expect(problems({ tokenEndpointAuthMethod: 'private_key_jwt', jwks })).toEqual([])
  })
})
