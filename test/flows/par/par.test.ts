// Pushed authorization requests (RFC 9126) and request objects (RFC 9101) as a client and a
// browser see them: the push, the request_uri at the authorization endpoint (used up by the code,
// a reload before that allowed, 60 seconds to arrive), other clients' request_uris, the clients'
// requirements, and request objects that fail their checks. Where the client and the redirect URI
// are known good, a refusal goes back there with state and iss; otherwise it is a page.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_ISSUER } from '../../helpers/app.js'
import { postForm } from '../../helpers/http.js'
import { located, session, WEB_CB, pkcePair, authorizeUrl } from '../authorization-code/harness.js'
import { assertion, JWT_BEARER, jwksServer, newKey } from '../../client-auth/assertion-fixtures.js'
import { dpopKey, proof, TOKEN_URL } from '../dpop/proof.js'
import { createParTestApp, JAR_CB, push, requestObject, RFC7636_VERIFIER, type ParTestApp } from './harness.js'

let t: ParTestApp
let alice: string
let jwks: Awaited<ReturnType<typeof jwksServer>>
beforeAll(async () => {
  jwks = await jwksServer()
  t = await createParTestApp({}, { jwksUri: jwks.url })
  alice = await session(t)
})
afterAll(async () => {
  await t?.close()
  await jwks?.close()
})

const get = (url: string, cookie = alice) => t.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} })
const authorizeWith = (requestUri: string, clientId = 'jar') =>
  `/connect/authorize?${new URLSearchParams({ client_id: clientId, request_uri: requestUri })}`
const PLAIN = {
  response_type: 'code',
  redirect_uri: JAR_CB,
  scope: 'openid profile',
  state: 's-1',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
}

/** A pushed request's request_uri, after checking the 201 answer. */
async function pushed(params: Record<string, string> = PLAIN, clientId = 'jar'): Promise<string> {
  const res = await push(t, params, clientId)
  expect(res.statusCode).toBe(201)
  expect(res.headers['cache-control']).toBe('no-store')
  const body = res.json<{ request_uri: string; expires_in: number }>()
  expect(body).toEqual({ request_uri: expect.stringMatching(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/), expires_in: 60 })
  return body.request_uri
}

/** The redirect's parameters, after checking it goes to `redirectUri`. */
function redirectedTo(res: Awaited<ReturnType<typeof get>>, redirectUri = JAR_CB): Record<string, string> {
  expect(res.statusCode).toBe(303)
  const url = located(res)
  expect(`${url.origin}${url.pathname}`).toBe(redirectUri)
  return Object.fromEntries(url.searchParams)
}

/** An error page: 400, HTML, no redirect, the description named. */
function errorPage(res: Awaited<ReturnType<typeof get>>, description: string) {
  expect(res.statusCode).toBe(400)
  expect(res.headers.location).toBeUndefined()
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
  expect(res.body).toContain(`Details: ${description}.`)
}

const redeem = (code: string, clientId = 'jar') =>
  postForm(t.app, '/connect/token', {
    grant_type: 'authorization_code',
    code,
    redirect_uri: JAR_CB,
    code_verifier: RFC7636_VERIFIER,
    client_id: clientId,
    client_secret: `${clientId}-secret`,
  })

describe('the pushed authorization request endpoint', () => {
  it('answers 201 with a request_uri that the authorization endpoint turns into a code, once', async () => {
    const uri = await pushed()
    const back = redirectedTo(await get(authorizeWith(uri)))
    expect(back).toEqual({ code: expect.any(String), state: 's-1', iss: TEST_ISSUER })
    const token = await redeem(back.code!)
    expect(token.statusCode).toBe(200)
    expect(token.json()).toMatchObject({ token_type: 'Bearer', scope: 'openid profile' })
    // Used up by the code: the same request_uri again goes back with invalid_request_uri.
    expect(redirectedTo(await get(authorizeWith(uri)))).toEqual({
      error: 'invalid_request_uri',
      error_description: 'request_uri has expired or has been used',
      state: 's-1',
      iss: TEST_ISSUER,
    })
  })

  it('keeps no client credentials in the request it holds', async () => {
    await pushed()
    const { rows } = await t.db.query<{ params: Array<[string, string]> }>(
      'SELECT params FROM pushed_authorization_requests ORDER BY created_at DESC LIMIT 1',
    )
    expect(rows[0]!.params.map(([k]) => k)).not.toContain('client_secret')
    const { rows: hashes } = await t.db.query<{ handle_hash: string }>('SELECT handle_hash FROM pushed_authorization_requests')
    expect(hashes.every((r) => /^[A-Za-z0-9_-]{43}$/.test(r.handle_hash))).toBe(true)
  })

  it('allows a reload before the code: the sign-in page, twice, then the code', async () => {
    const uri = await pushed()
    for (let i = 0; i < 2; i++) {
      const res = await get(authorizeWith(uri), '')
      expect(res.statusCode).toBe(303)
      expect(String(res.headers.location)).toMatch(/^\/account\/sign-in\?/)
    }
    expect(redirectedTo(await get(authorizeWith(uri)))).toMatchObject({ code: expect.any(String), state: 's-1' })
  })

  it('waits 60 seconds for the first arrival; from then the person has time to sign in', async () => {
    const late = await pushed()
    const opened = await pushed()
    t.clock.advance(30)
    expect((await get(authorizeWith(opened), '')).statusCode).toBe(303) // to the sign-in page
    t.clock.advance(31)
    expect(redirectedTo(await get(authorizeWith(late)))).toEqual({
      error: 'invalid_request_uri',
      error_description: 'request_uri has expired or has been used',
      state: 's-1',
      iss: TEST_ISSUER,
    })
    t.clock.advance(120)
    expect(redirectedTo(await get(authorizeWith(opened)))).toMatchObject({ code: expect.any(String), state: 's-1' })
  })

  it("shows a page for an unknown request_uri, another client's, or one that is not ours", async () => {
    const uri = await pushed()
    errorPage(await get(authorizeWith(uri, 'par-only')), 'request_uri is unknown or not issued to this client')
    errorPage(
      await get(authorizeWith(`urn:ietf:params:oauth:request_uri:${'A'.repeat(43)}`)),
      'request_uri is unknown or not issued to this client',
    )
    errorPage(await get(authorizeWith('https://jar.example/request.jwt')), 'request_uri is unknown or not issued to this client')
    // Still usable by its own client.
    expect(redirectedTo(await get(authorizeWith(uri)))).toMatchObject({ code: expect.any(String) })
  })

  it.each([
    [
      'a request_uri',
      { ...PLAIN, request_uri: 'urn:ietf:params:oauth:request_uri:x' },
      'invalid_request',
      'request_uri is not allowed at this endpoint',
    ],
    [
      'an unregistered redirect URI',
      { ...PLAIN, redirect_uri: 'https://evil.example/cb' },
      'invalid_request',
      'redirect_uri is not registered for this client',
    ],
    [
      'no PKCE',
      { ...PLAIN, code_challenge: '', code_challenge_method: '' },
      'invalid_request',
      'code_challenge is required (PKCE with S256)',
    ],
    ['an unknown scope', { ...PLAIN, scope: 'openid payments' }, 'invalid_scope', expect.any(String)],
  ])('refuses %s as the authorization endpoint would, to the client', async (_name, params, error, description) => {
    const res = await postForm(t.app, '/connect/par', { client_id: 'jar', client_secret: 'jar-secret', ...params })
    expect(res.statusCode).toBe(400)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.json()).toEqual({ error, error_description: description })
  })

  it('takes a client assertion whose aud is the issuer, the token endpoint or this endpoint (RFC 9126 §2)', async () => {
    const key = { privateKey: t.privateKey, kid: 'k1', alg: 'ES256' }
    const pushWith = async (aud: string) =>
      postForm(t.app, '/connect/par', {
        ...PLAIN,
        client_id: 'jar-signer',
        client_assertion_type: JWT_BEARER,
        client_assertion: await assertion(t, key, 'jar-signer', { aud }),
      })
    for (const aud of [TEST_ISSUER, `${TEST_ISSUER}/connect/token`, `${TEST_ISSUER}/connect/par`]) {
      const res = await pushWith(aud)
      expect({ aud, status: res.statusCode }).toEqual({ aud, status: 201 })
    }
    const elsewhere = await pushWith(`${TEST_ISSUER}/connect/revocation`)
    expect(elsewhere.statusCode).toBe(401)
    expect(elsewhere.json()).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' })
  })

  it('refuses a client that does not authenticate', async () => {
    const res = await postForm(t.app, '/connect/par', { ...PLAIN, client_id: 'jar', client_secret: 'wrong' })
    expect(res.statusCode).toBe(401)
    expect(res.json()).toMatchObject({ error: 'invalid_client' })
  })
})

describe("the clients' requirements", () => {
  it('requirePushedAuthorization: a direct request goes back with invalid_request; a pushed one works', async () => {
    const direct = `/connect/authorize?${new URLSearchParams({ client_id: 'par-only', ...PLAIN })}`
    expect(redirectedTo(await get(direct))).toEqual({
      error: 'invalid_request',
      error_description: 'pushed authorization requests are required: use the pushed authorization request endpoint',
      state: 's-1',
      iss: TEST_ISSUER,
    })
    // A request object by value is not a pushed request either.
    const byValue = `/connect/authorize?${new URLSearchParams({ client_id: 'par-only', request: await requestObject(t, {}, { clientId: 'par-only' }) })}`
    expect(redirectedTo(await get(byValue))).toMatchObject({ error: 'invalid_request', state: 'jar-state' })
    expect(redirectedTo(await get(authorizeWith(await pushed(PLAIN, 'par-only'), 'par-only')))).toMatchObject({ code: expect.any(String) })
  })

  it('requireRequestObject: an unsigned push and a plain request are invalid_request; a signed one works', async () => {
    const res = await push(t, PLAIN, 'jar-only')
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ error: 'invalid_request', error_description: 'a signed request object is required' })
    const direct = `/connect/authorize?${new URLSearchParams({ client_id: 'jar-only', ...PLAIN })}`
    expect(redirectedTo(await get(direct))).toMatchObject({
      error: 'invalid_request',
      error_description: 'a signed request object is required',
    })
    const uri = await pushed({ request: await requestObject(t, {}, { clientId: 'jar-only' }) }, 'jar-only')
    expect(redirectedTo(await get(authorizeWith(uri, 'jar-only')))).toMatchObject({ code: expect.any(String), state: 'jar-state' })
  })
})

describe('request objects', () => {
  it('by value: only the parameters inside count; the code is issued and redeemed', async () => {
    const jwt = await requestObject(t)
    // Outside: another scope, state and redirect URI, all ignored (RFC 9101 §5).
    const url = `/connect/authorize?${new URLSearchParams({ client_id: 'jar', request: jwt, scope: 'openid profile orders.read', state: 'outside', redirect_uri: WEB_CB })}`
    const back = redirectedTo(await get(url))
    expect(back).toEqual({ code: expect.any(String), state: 'jar-state', iss: TEST_ISSUER })
    const token = await redeem(back.code!)
    expect(token.statusCode).toBe(200)
    expect(token.json()).toMatchObject({ scope: 'openid' })
  })

  it('by value, through the sign-in page: the way back works without replaying the jti', async () => {
    const res = await get(`/connect/authorize?${new URLSearchParams({ client_id: 'jar', request: await requestObject(t) })}`, '')
    expect(res.statusCode).toBe(303)
    const signIn = new URL(String(res.headers.location), TEST_ISSUER)
    const returnTo = signIn.searchParams.get('return_to')!
    expect(returnTo).toMatch(/^\/connect\/authorize\?client_id=jar&request_uri=urn%3Aietf%3Aparams%3Aoauth%3Arequest_uri%3A/)
    expect(redirectedTo(await get(returnTo))).toMatchObject({ code: expect.any(String), state: 'jar-state' })
  })

  it('inside PAR', async () => {
    const uri = await pushed({ request: await requestObject(t, { state: 'pushed-jar' }), scope: 'ignored' })
    expect(redirectedTo(await get(authorizeWith(uri)))).toMatchObject({ code: expect.any(String), state: 'pushed-jar' })
  })

  it('refuses a replayed jti, by value and inside PAR', async () => {
    const jwt = await requestObject(t)
    expect(redirectedTo(await get(`/connect/authorize?${new URLSearchParams({ client_id: 'jar', request: jwt })}`))).toMatchObject({
      code: expect.any(String),
    })
    errorPage(
      await get(`/connect/authorize?${new URLSearchParams({ client_id: 'jar', request: jwt })}`),
      'request object: jti already used',
    )
    const res = await push(t, { request: jwt })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ error: 'invalid_request_object', error_description: 'request object: jti already used' })
  })

  const now = () => Math.floor(t.clock.now() / 1000)
  it.each<[string, () => Promise<string>, string]>([
    ['a wrong aud', () => requestObject(t, { aud: 'https://other.example' }), 'request object: aud claim invalid'],
    ['an expired one', () => requestObject(t, { nbf: now() - 600, iat: now() - 600, exp: now() - 300 }), 'request object: expired'],
    ['one not yet valid', () => requestObject(t, { nbf: now() + 600, exp: now() + 900 }), 'request object: nbf claim invalid'],
    ['one without jti', () => requestObject(t, { jti: undefined }), 'request object: jti claim missing'],
    ['one living over an hour', () => requestObject(t, { exp: now() + 7200 }), 'request object: exp is more than 3600 seconds after nbf'],
    ['another iss', () => requestObject(t, { iss: 'web' }), 'request object: iss claim invalid'],
    [
      'alg none (unsigned)',
      async () => unsigned({ iss: 'jar', aud: TEST_ISSUER, exp: now() + 60, nbf: now(), jti: randomUUID() }),
      'request object: algorithm not allowed (use PS256, ES256, RS256)',
    ],
    [
      'HS256',
      () => requestObject(t, {}, { alg: 'HS256', key: new TextEncoder().encode('jar-secret-jar-secret-jar-secret!') }),
      'request object: algorithm not allowed (use PS256, ES256, RS256)',
    ],
    ['a nested request_uri', () => requestObject(t, { request_uri: 'urn:x' }), 'request object: it must not hold request or request_uri'],
  ])('refuses %s with invalid_request_object on a page', async (_name, make, description) => {
    const res = await get(
      `/connect/authorize?${new URLSearchParams({ client_id: 'jar', request: await make(), state: 'outside', redirect_uri: JAR_CB })}`,
    )
    errorPage(res, description)
    const pushedRes = await push(t, { request: await make() })
    expect(pushedRes.statusCode).toBe(400)
    expect(pushedRes.json()).toMatchObject({ error: 'invalid_request_object' })
  })

  it('from a client whose keys are at its jwks_uri: by value and inside PAR', async () => {
    const k = await newKey('k1')
    jwks.keys.push(k.publicJwk)
    const signed = (state: string) =>
      requestObject(t, { iss: 'jar-remote', client_id: 'jar-remote', state }, { key: k.privateKey, clientId: 'jar-remote' })
    const byValue = `/connect/authorize?${new URLSearchParams({ client_id: 'jar-remote', request: await signed('remote-value') })}`
    expect(redirectedTo(await get(byValue))).toMatchObject({ code: expect.any(String), state: 'remote-value' })
    const uri = await pushed({ request: await signed('remote-pushed') }, 'jar-remote')
    expect(redirectedTo(await get(authorizeWith(uri, 'jar-remote')))).toMatchObject({ code: expect.any(String), state: 'remote-pushed' })
    expect(jwks.requests()).toBe(1)
  })

  it('refuses a request object signed by another key', async () => {
    const { generateKeyPair } = await import('jose')
    const { privateKey } = await generateKeyPair('ES256')
    errorPage(
      await get(
        `/connect/authorize?${new URLSearchParams({ client_id: 'jar', request: await requestObject(t, {}, { key: privateKey }) })}`,
      ),
      'request object: signature verification failed',
    )
  })

  it('a client without keys cannot send one', async () => {
    const { challenge } = pkcePair()
    const url = authorizeUrl({ request: 'eyJhbGciOiJFUzI1NiJ9.e30.sig' }, challenge)
    errorPage(await get(url), 'request object: the client has no registered public keys')
  })
})

describe('a DPoP proof sent with the push (RFC 9449 §10.1)', () => {
  const PAR_URL = `${TEST_ISSUER}/connect/par`
  const pushWithProof = async (dpop: string, params: Record<string, string> = PLAIN) =>
    postForm(t.app, '/connect/par', { client_id: 'jar', client_secret: 'jar-secret', ...params }, { dpop })
  const redeemWith = async (code: string, dpop?: string) =>
    postForm(
      t.app,
      '/connect/token',
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: JAR_CB,
        code_verifier: RFC7636_VERIFIER,
        client_id: 'jar',
        client_secret: 'jar-secret',
      },
      dpop === undefined ? {} : { dpop },
    )

  it("binds the code to the proof's key, as dpop_jkt would", async () => {
    const key = await dpopKey()
    const res = await pushWithProof(await proof(t, key, { htu: PAR_URL }))
    expect(res.statusCode).toBe(201)
    const back = redirectedTo(await get(authorizeWith(res.json<{ request_uri: string }>().request_uri)))
    const other = await redeemWith(back.code!, await proof(t, await dpopKey()))
    expect({ status: other.statusCode, body: other.json() }).toEqual({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'the DPoP proof is not of the key the authorization code is bound to' },
    })
    const bound = await redeemWith(back.code!, await proof(t, key))
    expect(bound.statusCode).toBe(200)
    expect(bound.json()).toMatchObject({ token_type: 'DPoP' })
  })

  it('takes a dpop_jkt beside it when it names the same key', async () => {
    const key = await dpopKey()
    const res = await pushWithProof(await proof(t, key, { htu: PAR_URL }), { ...PLAIN, dpop_jkt: key.jkt })
    expect(res.statusCode).toBe(201)
  })

  it.each<[string, (key: Awaited<ReturnType<typeof dpopKey>>) => Promise<string>]>([
    ["the token endpoint's htu", (key) => proof(t, key, { htu: TOKEN_URL })],
    ['htm GET', (key) => proof(t, key, { htm: 'GET', htu: PAR_URL })],
    ['an old iat', (key) => proof(t, key, { htu: PAR_URL, iat: Math.floor(t.clock.now() / 1000) - 600 })],
  ])('checks it: a proof with %s is 400 invalid_dpop_proof', async (_name, make) => {
    const res = await pushWithProof(await make(await dpopKey()))
    expect(res.statusCode).toBe(400)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.json()).toMatchObject({ error: 'invalid_dpop_proof' })
  })

  it("refuses a dpop_jkt that is not the proof's key with invalid_dpop_proof", async () => {
    const res = await pushWithProof(await proof(t, await dpopKey(), { htu: PAR_URL }), { ...PLAIN, dpop_jkt: (await dpopKey()).jkt })
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 400,
      body: { error: 'invalid_dpop_proof', error_description: 'dpop_jkt does not match the key of the DPoP proof' },
    })
  })
})

describe('discovery', () => {
  it('names the endpoint and what the authorization endpoint takes', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json<Record<string, unknown>>()
    expect(doc).toMatchObject({
      pushed_authorization_request_endpoint: `${TEST_ISSUER}/connect/par`,
      require_pushed_authorization_requests: false,
      request_parameter_supported: true,
      request_uri_parameter_supported: false,
      request_object_signing_alg_values_supported: ['PS256', 'ES256', 'RS256'],
      authorization_response_iss_parameter_supported: true,
    })
  })
})

function unsigned(claims: Record<string, unknown>): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url')
  return `${part({ alg: 'none' })}.${part({ ...claims, response_type: 'code', redirect_uri: JAR_CB, scope: 'openid' })}.`
}
