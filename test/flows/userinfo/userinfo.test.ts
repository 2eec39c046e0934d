// GET and POST /connect/userinfo (OIDC Core §5.3, RFC 6750): the user's claims for the token's
// identity scopes and sub always, for JWT and reference access tokens; 401 invalid_token with a
// Bearer challenge for an expired, revoked or foreign token; 403 insufficient_scope without openid.
// ID tokens carry the same claims unless the client sets alwaysIncludeUserClaimsInIdToken false.
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import type { TestApp } from '../../helpers/app.js'
import { FORM, form, TEST_ISSUER } from '../../helpers/app.js'
import { postForm, postFormBasic } from '../../helpers/http.js'
import { authorizeSeed, codeFor, createAuthorizeTestApp, redeem, session } from '../authorization-code/harness.js'

let authz: TestApp
let alice: string
beforeAll(async () => {
  authz = await createAuthorizeTestApp()
  const seed = authorizeSeed()
  // The same client with reference access tokens; and one that leaves the user's claims to userinfo.
  await applySeed(authz.db, {
    ...seed,
    clients: [
      ...seed.clients,
      { ...seed.clients[0]!, clientId: 'web-ref', secrets: [{ value: 'web-ref-secret' }], accessTokenType: 'reference' as const },
      {
        ...seed.clients[0]!,
        clientId: 'web-quiet',
        secrets: [{ value: 'web-quiet-secret' }],
        allowedGrantTypes: ['authorization_code', 'password'],
        alwaysIncludeUserClaimsInIdToken: false,
      },
    ],
  })
  alice = await session(authz)
  await authz.db.query(`INSERT INTO consents (subject_id, client_id, scopes, created_at, updated_at) VALUES
    ('u-alice', 'web', '{openid,profile,email,orders.read,offline_access}', now(), now()),
    ('u-alice', 'web-ref', '{openid,profile,email,orders.read,offline_access}', now(), now()),
    ('u-alice', 'web-quiet', '{openid,profile,email,orders.read,offline_access}', now(), now())`)
})
afterAll(() => authz?.close())

/** The code flow's token response for `client`. */
async function tokens(scope: string, client = 'web'): Promise<Record<string, string>> {
  const { code, verifier } = await codeFor(authz, alice, { scope, client_id: client })
  const res = await redeem(authz, { code, code_verifier: verifier }, { client_id: client, client_secret: `${client}-secret` })
  expect(res.statusCode).toBe(200)
  return res.json()
}
const accessToken = async (scope: string, client = 'web') => (await tokens(scope, client)).access_token!
const get = (headers: Record<string, string> = {}) => authz.app.inject({ method: 'GET', url: '/connect/userinfo', headers })
const challenge = (error?: string) => `Bearer realm="${TEST_ISSUER}"${error ? `, error="${error}"` : ''}`

describe('userinfo', () => {
  it('GET with a Bearer JWT: sub and the claims of profile and email', async () => {
    const res = await get({ authorization: `Bearer ${await accessToken('openid profile email')}` })
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.json()).toEqual({
      sub: 'u-alice',
      name: 'Alice Example',
      family_name: 'Example',
      email: 'alice@example.com',
      email_verified: true,
    })
  })

  it('only the granted identity scopes: openid alone gives sub alone', async () => {
    expect((await get({ authorization: `Bearer ${await accessToken('openid')}` })).json()).toEqual({ sub: 'u-alice' })
  })

  it('POST with the token in the form, a reference token', async () => {
    const token = await accessToken('openid email', 'web-ref')
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const res = await postForm(authz.app, '/connect/userinfo', { access_token: token })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ sub: 'u-alice', email: 'alice@example.com', email_verified: true })
  })

  it('no token: 401 with a challenge without an error code (RFC 6750 §3.1)', async () => {
    const res = await get()
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toBe(challenge())
    expect(res.json()).toEqual({ error: 'invalid_token', error_description: 'an access token is required' })
  })

  it('a token in the header and the form: 400 invalid_request', async () => {
    const token = await accessToken('openid')
    const res = await authz.app.inject({
      method: 'POST',
      url: '/connect/userinfo',
      headers: { ...FORM, authorization: `Bearer ${token}` },
      payload: form({ access_token: token }),
    })
    expect(res.statusCode).toBe(400)
    expect(res.headers['www-authenticate']).toBe(challenge('invalid_request'))
  })

  it('expired, revoked, forged and foreign tokens: 401 invalid_token', async () => {
    const revoked = await accessToken('openid')
    expect((await postFormBasic(authz.app, '/connect/revocation', { token: revoked }, 'web', 'web-secret')).statusCode).toBe(200)
    const forged = `${revoked.slice(0, -4)}AAAA`
    const idToken = (await redeem(authz, await codeFor(authz, alice).then((c) => ({ code: c.code, code_verifier: c.verifier })))).json()
      .id_token
    const expired = await accessToken('openid')
    for (const token of [revoked, forged, idToken, 'x'.repeat(43)]) {
      const res = await get({ authorization: `Bearer ${token}` })
      expect(res.statusCode).toBe(401)
      expect(res.headers['www-authenticate']).toBe(challenge('invalid_token'))
      expect(res.json()).toEqual({ error: 'invalid_token', error_description: 'the access token is not valid' })
    }
    authz.clock.advance(3600)
    expect((await get({ authorization: `Bearer ${expired}` })).statusCode).toBe(401)
  })

  it('a token without openid: 403 insufficient_scope', async () => {
    const cc = await postFormBasic(authz.app, '/connect/token', { grant_type: 'client_credentials' }, 'cc-only', 'cc-secret')
    const res = await get({ authorization: `Bearer ${cc.json().access_token}` })
    expect(res.statusCode).toBe(403)
    expect(res.headers['www-authenticate']).toBe(`${challenge('insufficient_scope')}, scope="openid"`)
    expect(res.json()).toEqual({ error: 'insufficient_scope', error_description: 'the access token lacks the openid scope' })
  })

  it('a disabled user: 401 invalid_token', async () => {
    alice = await session(authz) // the clock moved past the old session's idle timeout
    const token = await accessToken('openid')
    await authz.db.query(`UPDATE users SET enabled = false WHERE username = 'alice'`)
    try {
      expect((await get({ authorization: `Bearer ${token}` })).statusCode).toBe(401)
    } finally {
      await authz.db.query(`UPDATE users SET enabled = true WHERE username = 'alice'`)
    }
  })
})

describe("the user's claims in ID tokens: alwaysIncludeUserClaimsInIdToken", () => {
  const PROFILE_AND_EMAIL = { name: 'Alice Example', family_name: 'Example', email: 'alice@example.com', email_verified: true }
  const token = (client: string, params: Record<string, string>) =>
    postForm(authz.app, '/connect/token', { client_id: client, client_secret: `${client}-secret`, ...params })

  it('by default (true) the ID token carries the claims of the granted identity scopes, as userinfo does', async () => {
    alice = await session(authz) // the clock may have moved past the session's idle timeout
    const body = await tokens('openid profile email')
    expect(decodeJwt(body.id_token!)).toMatchObject({ sub: 'u-alice', aud: 'web', ...PROFILE_AND_EMAIL })
    expect((await get({ authorization: `Bearer ${body.access_token}` })).json()).toEqual({ sub: 'u-alice', ...PROFILE_AND_EMAIL })
  })

  it("false: ID tokens of every grant carry the protocol claims only; userinfo still answers with the user's claims", async () => {
    alice = await session(authz)
    const body = await tokens('openid profile email offline_access', 'web-quiet')
    const code = decodeJwt(body.id_token!)
    expect(Object.keys(code).sort()).toEqual(['acr', 'amr', 'at_hash', 'aud', 'auth_time', 'exp', 'iat', 'iss', 'nonce', 'sid', 'sub'])
    expect(code).toMatchObject({ iss: TEST_ISSUER, sub: 'u-alice', aud: 'web-quiet', nonce: 'n-1', amr: ['pwd'] })
    expect((await get({ authorization: `Bearer ${body.access_token}` })).json()).toEqual({ sub: 'u-alice', ...PROFILE_AND_EMAIL })

    const refreshed = await token('web-quiet', { grant_type: 'refresh_token', refresh_token: body.refresh_token! })
    expect(refreshed.statusCode).toBe(200)
    expect(Object.keys(decodeJwt(refreshed.json().id_token)).sort()).toEqual([
      'acr',
      'amr',
      'at_hash',
      'aud',
      'auth_time',
      'exp',
      'iat',
      'iss',
      'sid',
      'sub',
    ])

    const password = await token('web-quiet', {
      grant_type: 'password',
      username: 'alice',
      password: 'alice-pw',
      scope: 'openid profile email',
    })
    expect(password.statusCode).toBe(200)
    expect(Object.keys(decodeJwt(password.json().id_token)).sort()).toEqual([
      'amr',
      'at_hash',
      'aud',
      'auth_time',
      'exp',
      'iat',
      'iss',
      'sub',
    ])
    expect((await get({ authorization: `Bearer ${password.json().access_token}` })).json()).toEqual({
      sub: 'u-alice',
      ...PROFILE_AND_EMAIL,
    })
  })
})
