// grant_type=authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.5–4.6, OIDC Core §3.1.3): the
// response (access token with aud, ID token with nonce, sid, auth_time, acr, amr, at_hash and the
// user's claims, refresh token with offline_access), every invalid_grant and invalid_request, a
// second redemption revoking what the first issued, and ten concurrent redemptions of one code.
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { atHash } from '../../../src/tokens/issuer.js'
import type { TestApp } from '../../helpers/app.js'
import { TEST_ISSUER } from '../../helpers/app.js'
import { postForm, postFormBasic } from '../../helpers/http.js'
import { codeFor, createAuthorizeTestApp, pkcePair, redeem, session, SPA_CB, WEB_CB } from './harness.js'

let authz: TestApp
let alice: string
beforeAll(async () => {
  authz = await createAuthorizeTestApp()
  alice = await session(authz)
  // alice remembers her consent for web, so codes come without the consent screen.
  await authz.db.query(`INSERT INTO consents (subject_id, client_id, scopes, created_at, updated_at)
    VALUES ('u-alice', 'web', '{openid,profile,email,orders.read,offline_access}', now(), now())`)
})
afterAll(() => authz?.close())

const jwks = async () =>
  createLocalJWKSet((await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration/jwks' })).json())
const introspect = (token: string) => postFormBasic(authz.app, '/connect/introspect', { token }, 'web', 'web-secret')

function expectError(res: Awaited<ReturnType<typeof redeem>>, error: string, description: string) {
  expect(res.statusCode).toBe(400)
  expect(res.headers['cache-control']).toBe('no-store')
  expect(res.json()).toEqual({ error, error_description: description })
}

describe('a successful redemption', () => {
  it('returns an access token for the API, an ID token and a refresh token', async () => {
    const { code, verifier } = await codeFor(authz, alice, { scope: 'openid profile email orders.read offline_access', nonce: 'n-42' })
    const res = await redeem(authz, { code, code_verifier: verifier })
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    const body = res.json()
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'openid profile email orders.read offline_access' })
    expect(body.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const at = decodeJwt(body.access_token)
    expect(at).toMatchObject({ iss: TEST_ISSUER, sub: 'u-alice', client_id: 'web', aud: 'orders-api', amr: ['pwd'], acr: '1' })
    const session = (
      await authz.db.query<{ sid: string; auth_time: Date }>(
        `SELECT sid, auth_time FROM user_sessions WHERE subject_id = 'u-alice' ORDER BY created_at DESC LIMIT 1`,
      )
    ).rows[0]!
    const authTime = Math.floor(new Date(session.auth_time).getTime() / 1000)
    const { payload, protectedHeader } = await jwtVerify(body.id_token, await jwks(), {
      issuer: TEST_ISSUER,
      audience: 'web',
      currentDate: new Date(authz.clock.now()),
    })
    expect(protectedHeader.alg).toBe('RS256')
    const now = Math.floor(authz.clock.now() / 1000)
    expect(payload).toEqual({
      iss: TEST_ISSUER,
      sub: 'u-alice',
      aud: 'web',
      iat: now,
      exp: now + 300,
      auth_time: authTime,
      nonce: 'n-42',
      sid: session.sid,
      acr: '1',
      amr: ['pwd'],
      at_hash: atHash(body.access_token),
      name: 'Alice Example',
      family_name: 'Example',
      email: 'alice@example.com',
      email_verified: true,
    })
  })

  it('an access token with identity scopes only has the issuer as aud; no refresh token without offline_access', async () => {
    const { code, verifier } = await codeFor(authz, alice, { scope: 'openid' })
    const body = (await redeem(authz, { code, code_verifier: verifier })).json()
    expect(decodeJwt(body.access_token).aud).toBe(TEST_ISSUER)
    expect(body.refresh_token).toBeUndefined()
    expect(decodeJwt(body.id_token)).not.toHaveProperty('name') // profile not granted
  })

  it('a public client redeems with client_id and its verifier', async () => {
    const { code, verifier } = await codeFor(authz, alice, {}, 'spa')
    const res = await redeem(authz, { code, code_verifier: verifier, redirect_uri: SPA_CB }, { client_id: 'spa' })
    expect(res.statusCode).toBe(200)
    expect(decodeJwt(res.json().id_token)).toMatchObject({ aud: 'spa', nonce: 'n-1' })
  })

  it('a client without requirePkce may leave PKCE out', async () => {
    await authz.db.query(
      `INSERT INTO consents (subject_id, client_id, scopes, created_at, updated_at) VALUES ('u-alice', 'nopkce', '{openid}', now(), now()) ON CONFLICT DO NOTHING`,
    )
    const res = await authz.app.inject({
      method: 'GET',
      url: `/connect/authorize?client_id=nopkce&response_type=code&scope=openid`,
      headers: { cookie: alice },
    })
    const code = new URL(String(res.headers.location)).searchParams.get('code')!
    const ok = await redeem(
      authz,
      { code, redirect_uri: 'https://nopkce.example/cb' },
      { client_id: 'nopkce', client_secret: 'nopkce-secret' },
    )
    expect(ok.statusCode).toBe(200)
  })
})

describe('invalid_request and invalid_grant', () => {
  it('code or redirect_uri missing: invalid_request', async () => {
    const { code, verifier } = await codeFor(authz, alice)
    const noCode = await postForm(authz.app, '/connect/token', {
      grant_type: 'authorization_code',
      client_id: 'web',
      client_secret: 'web-secret',
      redirect_uri: WEB_CB,
      code_verifier: verifier,
    })
    expectError(noCode, 'invalid_request', 'code is missing or invalid')
    const noRedirect = await postForm(authz.app, '/connect/token', {
      grant_type: 'authorization_code',
      client_id: 'web',
      client_secret: 'web-secret',
      code,
      code_verifier: verifier,
    })
    expectError(noRedirect, 'invalid_request', 'redirect_uri is missing or invalid')
    expect((await redeem(authz, { code, code_verifier: verifier })).statusCode).toBe(200) // neither consumed it
  })

  it.each([
    [
      'an unknown code',
      (c: { code: string; verifier: string }) => ({ code: 'x'.repeat(43), code_verifier: c.verifier }),
      'unknown authorization code',
    ],
    [
      'a redirect URI that differs',
      (c: { code: string; verifier: string }) => ({ code: c.code, code_verifier: c.verifier, redirect_uri: 'https://web.example/other' }),
      'redirect_uri does not match the authorization request',
    ],
    [
      'a wrong verifier',
      (c: { code: string; verifier: string }) => ({ code: c.code, code_verifier: pkcePair().verifier }),
      'code_verifier does not match code_challenge',
    ],
    ['no verifier', (c: { code: string; verifier: string }) => ({ code: c.code }), 'code_verifier is required for this code'],
    [
      'a verifier too short',
      (c: { code: string; verifier: string }) => ({ code: c.code, code_verifier: 'a'.repeat(42) }),
      'code_verifier is malformed',
    ],
    [
      'a verifier outside the alphabet',
      (c: { code: string; verifier: string }) => ({ code: c.code, code_verifier: `${c.verifier.slice(0, 42)}+` }),
      'code_verifier is malformed',
    ],
  ])('%s', async (_name, params, description) => {
    const c = await codeFor(authz, alice)
    expectError(await redeem(authz, params(c)), 'invalid_grant', description)
    expect((await redeem(authz, { code: c.code, code_verifier: c.verifier })).statusCode).toBe(200) // the code still works once
  })

  it('logs both redirect URIs when the one sent differs from the authorization request', async () => {
    const c = await codeFor(authz, alice)
    const from = authz.logs.length
    expectError(
      await redeem(authz, { code: c.code, code_verifier: c.verifier, redirect_uri: 'https://web.example/other' }),
      'invalid_grant',
      'redirect_uri does not match the authorization request',
    )
    const lines = authz.logs.slice(from).map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(lines.filter((l) => l.msg === 'redirect_uri does not match the authorization request')).toEqual([
      expect.objectContaining({
        error: 'invalid_grant',
        redirect_uri: 'https://web.example/other',
        authorization_redirect_uri: 'https://web.example/cb',
      }),
    ])
  })

  it("another client's code", async () => {
    const c = await codeFor(authz, alice, {}, 'spa')
    expectError(await redeem(authz, { code: c.code, code_verifier: c.verifier }), 'invalid_grant', 'unknown authorization code')
  })

  it('a verifier where no challenge was stored', async () => {
    const res = await authz.app.inject({
      method: 'GET',
      url: `/connect/authorize?client_id=nopkce&response_type=code&scope=openid`,
      headers: { cookie: alice },
    })
    const code = new URL(String(res.headers.location)).searchParams.get('code')!
    expectError(
      await redeem(
        authz,
        { code, redirect_uri: 'https://nopkce.example/cb', code_verifier: pkcePair().verifier },
        { client_id: 'nopkce', client_secret: 'nopkce-secret' },
      ),
      'invalid_grant',
      'code_verifier sent for a code issued without code_challenge',
    )
  })

  it('an expired code (AUTHORIZATION_CODE_LIFETIME, 300 s)', async () => {
    const c = await codeFor(authz, alice)
    authz.clock.advance(300)
    expectError(await redeem(authz, { code: c.code, code_verifier: c.verifier }), 'invalid_grant', 'authorization code expired')
  })

  it('a disabled user', async () => {
    const bob = await session(authz, 'bob', 'bob-pw')
    const c = await codeFor(authz, bob, {}, 'spa')
    await authz.db.query(`UPDATE users SET enabled = false WHERE username = 'bob'`)
    try {
      expectError(
        await redeem(authz, { code: c.code, code_verifier: c.verifier, redirect_uri: SPA_CB }, { client_id: 'spa' }),
        'invalid_grant',
        'the user is no longer active',
      )
    } finally {
      await authz.db.query(`UPDATE users SET enabled = true WHERE username = 'bob'`)
    }
  })
})

describe('used once', () => {
  it('a second redemption is invalid_grant and revokes every token issued from the code', async () => {
    const c = await codeFor(authz, alice, { scope: 'openid orders.read offline_access' })
    const first = (await redeem(authz, { code: c.code, code_verifier: c.verifier })).json()
    expect((await introspect(first.access_token)).json()).toMatchObject({ active: true })
    // Within CONCURRENT_REDEMPTION_MS: a duplicate in flight, refused without revoking.
    expectError(
      await redeem(authz, { code: c.code, code_verifier: c.verifier }),
      'invalid_grant',
      'authorization code is being redeemed by another request',
    )
    expect((await introspect(first.access_token)).json()).toMatchObject({ active: true })
    authz.clock.advance(2)
    expectError(await redeem(authz, { code: c.code, code_verifier: c.verifier }), 'invalid_grant', 'authorization code already used')
    expect((await introspect(first.access_token)).json()).toEqual({ active: false })
    const refresh = await postForm(authz.app, '/connect/token', {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: 'web',
      client_secret: 'web-secret',
    })
    expectError(refresh, 'invalid_grant', 'unknown refresh token')
  })

  it('ten concurrent redemptions of one code: exactly one succeeds, 20 trials', { timeout: 120_000 }, async () => {
    for (let trial = 0; trial < 20; trial++) {
      const c = await codeFor(authz, alice, { scope: 'openid orders.read offline_access' })
      const results = await Promise.all(Array.from({ length: 10 }, () => redeem(authz, { code: c.code, code_verifier: c.verifier })))
      const ok = results.filter((r) => r.statusCode === 200)
      expect(ok).toHaveLength(1)
      for (const r of results.filter((r) => r.statusCode !== 200)) expect(r.json()).toMatchObject({ error: 'invalid_grant' })
      // The winner's tokens work; a use after the concurrency window revokes them (RFC 6749 §4.1.2).
      const winner = ok[0]!.json()
      expect((await introspect(winner.access_token)).json()).toMatchObject({ active: true })
      authz.clock.advance(2)
      expectError(await redeem(authz, { code: c.code, code_verifier: c.verifier }), 'invalid_grant', 'authorization code already used')
      expect((await introspect(winner.access_token)).json()).toEqual({ active: false })
    }
  })
})
