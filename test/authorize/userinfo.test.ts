// GET and POST /connect/userinfo (OIDC Core §5.3, RFC 6750): the user's claims for the token's
// identity scopes and sub always, for JWT and reference access tokens; 401 invalid_token with a
// Bearer challenge for an expired, revoked or foreign token; 403 insufficient_scope without openid.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../src/seed/apply.js'
import type { TestApp } from '../helpers/app.js'
import { basic, FORM, form, TEST_ISSUER } from '../helpers/app.js'
import { authorizeSeed, codeFor, createAuthorizeTestApp, redeem, session } from './harness.js'

let t: TestApp
let alice: string
beforeAll(async () => {
  t = await createAuthorizeTestApp()
  const seed = authorizeSeed()
  // The same client with reference access tokens, and a client_credentials client.
  await applySeed(t.db, { ...seed, clients: [...seed.clients, { ...seed.clients[0]!, clientId: 'web-ref', secrets: [{ value: 'web-ref-secret' }], accessTokenType: 'reference' as const }] })
  alice = await session(t)
  await t.db.query(`INSERT INTO consents (subject_id, client_id, scopes, created_at, updated_at) VALUES
    ('u-alice', 'web', '{openid,profile,email,orders.read,offline_access}', now(), now()),
    ('u-alice', 'web-ref', '{openid,profile,email,orders.read,offline_access}', now(), now())`)
})
afterAll(() => t?.close())

async function accessToken(scope: string, client = 'web'): Promise<string> {
  const { code, verifier } = await codeFor(t, alice, { scope, client_id: client })
  const res = await redeem(t, { code, code_verifier: verifier }, { client_id: client, client_secret: `${client}-secret` })
  expect(res.statusCode).toBe(200)
  return res.json().access_token
}
const get = (headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url: '/connect/userinfo', headers })
const challenge = (error?: string) => `Bearer realm="${TEST_ISSUER}"${error ? `, error="${error}"` : ''}`

describe('userinfo', () => {
  it('GET with a Bearer JWT: sub and the claims of profile and email', async () => {
    const res = await get({ authorization: `Bearer ${await accessToken('openid profile email')}` })
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.json()).toEqual({ sub: 'u-alice', name: 'Alice Example', family_name: 'Example', email: 'alice@example.com', email_verified: true })
  })

  it('only the granted identity scopes: openid alone gives sub alone', async () => {
    expect((await get({ authorization: `Bearer ${await accessToken('openid')}` })).json()).toEqual({ sub: 'u-alice' })
  })

  it('POST with the token in the form, a reference token', async () => {
    const token = await accessToken('openid email', 'web-ref')
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const res = await t.app.inject({ method: 'POST', url: '/connect/userinfo', headers: FORM, payload: form({ access_token: token }) })
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
    const res = await t.app.inject({ method: 'POST', url: '/connect/userinfo', headers: { ...FORM, authorization: `Bearer ${token}` }, payload: form({ access_token: token }) })
    expect(res.statusCode).toBe(400)
    expect(res.headers['www-authenticate']).toBe(challenge('invalid_request'))
  })

  it('expired, revoked, forged and foreign tokens: 401 invalid_token', async () => {
    const revoked = await accessToken('openid')
    expect((await t.app.inject({ method: 'POST', url: '/connect/revocation', headers: { ...FORM, authorization: basic('web', 'web-secret') }, payload: form({ token: revoked }) })).statusCode).toBe(200)
    const forged = `${revoked.slice(0, -4)}AAAA`
    const idToken = (await redeem(t, await codeFor(t, alice).then((c) => ({ code: c.code, code_verifier: c.verifier })))).json().id_token
    const expired = await accessToken('openid')
    for (const token of [revoked, forged, idToken, 'x'.repeat(43)]) {
      const res = await get({ authorization: `Bearer ${token}` })
      expect(res.statusCode).toBe(401)
      expect(res.headers['www-authenticate']).toBe(challenge('invalid_token'))
      expect(res.json()).toEqual({ error: 'invalid_token', error_description: 'the access token is not valid' })
    }
    t.clock.advance(3600)
    expect((await get({ authorization: `Bearer ${expired}` })).statusCode).toBe(401)
  })

  it('a token without openid: 403 insufficient_scope', async () => {
    const cc = await t.app.inject({ method: 'POST', url: '/connect/token', headers: { ...FORM, authorization: basic('cc-only', 'cc-secret') }, payload: form({ grant_type: 'client_credentials' }) })
    const res = await get({ authorization: `Bearer ${cc.json().access_token}` })
    expect(res.statusCode).toBe(403)
    expect(res.headers['www-authenticate']).toBe(`${challenge('insufficient_scope')}, scope="openid"`)
    expect(res.json()).toEqual({ error: 'insufficient_scope', error_description: 'the access token lacks the openid scope' })
  })

  it('a disabled user: 401 invalid_token', async () => {
    alice = await session(t) // the clock moved past the old session's idle timeout
    const token = await accessToken('openid')
    await t.db.query(`UPDATE users SET enabled = false WHERE username = 'alice'`)
    try {
      expect((await get({ authorization: `Bearer ${token}` })).statusCode).toBe(401)
    } finally {
      await t.db.query(`UPDATE users SET enabled = true WHERE username = 'alice'`)
    }
  })
})
