// GET and POST /connect/endsession (OpenID Connect RP-Initiated Logout 1.0): with an id_token_hint
// of this session the session ends at once and the person goes back to the registered
// post_logout_redirect_uri with state; without proof a confirmation page comes first; an
// unregistered URI or a foreign hint is a page, never a redirect; no URI: the signed-out page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { csrfIn, withCookies } from '../../helpers/http.js'
import type { TestApp } from '../../helpers/app.js'
import { FORM, form } from '../../helpers/app.js'
import { applySeed } from '../../../src/seed/apply.js'
import { authorizeSeed, codeFor, createAuthorizeTestApp, redeem, session } from '../authorization-code/harness.js'

let authz: TestApp
beforeAll(async () => {
  authz = await createAuthorizeTestApp()
  // A client of alice's outside the browser: its ID tokens name her but no session of this browser.
  const seed = authorizeSeed()
  await applySeed(authz.db, {
    ...seed,
    clients: [
      ...seed.clients,
      {
        clientId: 'legacy',
        secrets: [{ value: 'legacy-secret' }],
        allowedGrantTypes: ['password'],
        allowedScopes: ['openid'],
        postLogoutRedirectUris: ['https://legacy.example/bye'],
      },
    ],
  })
  await authz.db.query(
    `INSERT INTO consents (subject_id, client_id, scopes, created_at, updated_at) VALUES ('u-alice', 'web', '{openid,profile}', now(), now())`,
  )
})
afterAll(() => authz?.close())

const BYE = 'https://web.example/bye'
const get = (url: string, cookie = '') => authz.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} })
const signedIn = async (cookie: string) => (await get('/account', cookie)).statusCode === 200

/** A session and an ID token issued in it. */
async function signedInWithIdToken() {
  const cookie = await session(authz)
  const { code, verifier } = await codeFor(authz, cookie)
  return { cookie, idToken: (await redeem(authz, { code, code_verifier: verifier })).json().id_token as string }
}

const endsession = (params: Record<string, string>) => `/connect/endsession?${new URLSearchParams(params)}`

describe('RP-initiated logout', () => {
  it('an id_token_hint of this session: ends it at once and redirects with state', async () => {
    const { cookie, idToken } = await signedInWithIdToken()
    const res = await get(endsession({ id_token_hint: idToken, post_logout_redirect_uri: BYE, state: 's-9' }), cookie)
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`${BYE}?state=s-9`)
    expect(String(res.headers['set-cookie'])).toMatch(/__Host-authz-session=;/)
    expect(await signedIn(cookie)).toBe(false)
  })

  it('POST works the same', async () => {
    const { cookie, idToken } = await signedInWithIdToken()
    const res = await authz.app.inject({
      method: 'POST',
      url: '/connect/endsession',
      headers: { ...FORM, cookie },
      payload: form({ id_token_hint: idToken, post_logout_redirect_uri: BYE }),
    })
    expect(res.headers.location).toBe(BYE)
    expect(await signedIn(cookie)).toBe(false)
  })

  it('without proof (client_id only): asks first; confirming ends the session and redirects', async () => {
    const cookie = await session(authz)
    const url = endsession({ client_id: 'web', post_logout_redirect_uri: BYE, state: 'x' })
    const page = await get(url, cookie)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('<strong id="client-name">Web &lt;App&gt;</strong> asks to sign you out.')
    expect(page.headers['content-security-policy']).toContain("form-action 'self' https://web.example;")
    expect(await signedIn(cookie)).toBe(true) // nothing ended yet
    const jar = withCookies(cookie, page.headers['set-cookie'])
    const action = /<form method="post" action="([^"]+)"/.exec(page.body)![1]!.replace(/&amp;/g, '&')
    const res = await authz.app.inject({
      method: 'POST',
      url: action,
      headers: { ...FORM, cookie: jar },
      payload: form({ csrf: csrfIn(page.body), decision: 'sign-out' }),
    })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`${BYE}?state=x`)
    expect(await signedIn(cookie)).toBe(false)
  })

  it('an ID token from another session is no proof', async () => {
    const { idToken } = await signedInWithIdToken()
    const other = await session(authz)
    const page = await get(endsession({ id_token_hint: idToken }), other)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('<h1>Sign out?</h1>')
    expect(await signedIn(other)).toBe(true)
  })

  it('an ID token of the same user without sid (password grant), expired and older than the sign-in, is no proof: asks first', async () => {
    // The attack: any such token (another app of the user's, a leaked old one) put in a link on
    // any page would sign the person out at once and tell every client of the session; only a
    // sid of this session shows the request comes from one of its clients (RP-Initiated Logout 1.0 §2).
    const issued = await authz.app.inject({
      method: 'POST',
      url: '/connect/token',
      headers: FORM,
      payload: form({
        grant_type: 'password',
        client_id: 'legacy',
        client_secret: 'legacy-secret',
        username: 'alice',
        password: 'alice-pw',
        scope: 'openid',
      }),
    })
    expect(issued.statusCode).toBe(200)
    const idToken = issued.json().id_token as string
    expect(JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString())).not.toHaveProperty('sid')
    authz.clock.advance(2 * 3600) // the ID token has expired; the browser signs in after that
    const { cookie } = await signedInWithIdToken()
    const requests: Array<Record<string, string>> = [
      { id_token_hint: idToken },
      { id_token_hint: idToken, post_logout_redirect_uri: 'https://legacy.example/bye', state: 's' },
    ]
    for (const params of requests) {
      const page = await get(endsession(params), cookie)
      expect(page.statusCode).toBe(200)
      expect(page.headers.location).toBeUndefined()
      expect(page.body).toContain('<h1>Sign out?</h1>')
      expect(page.body).toContain('You are signed in as <strong>alice</strong>.')
      expect(String(page.headers['set-cookie'])).not.toContain('authz-session')
      expect(await signedIn(cookie)).toBe(true)
    }
  })

  it('a cross-site POST without the session cookie (logout CSRF) changes nothing: no cookie cleared, the page asks', async () => {
    // SameSite=Lax keeps the session cookie off a cross-site POST, so its absence proves nothing:
    // answering "signed out" would clear the cookie in the victim's browser while the session
    // lives on and its clients are never told. The page asks; the person's own confirmation
    // (a same-origin POST, which carries the cookie) ends the session.
    const { cookie, idToken } = await signedInWithIdToken()
    const res = await authz.app.inject({
      method: 'POST',
      url: '/connect/endsession',
      headers: { ...FORM, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      payload: form({ id_token_hint: idToken, post_logout_redirect_uri: BYE, state: 's-1' }),
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers.location).toBeUndefined()
    expect(res.body).toContain('<h1>Sign out?</h1>')
    expect(res.body).toContain('<strong id="client-name">Web &lt;App&gt;</strong> asks to sign you out.')
    expect(res.body).not.toContain('You are signed in as')
    expect(String(res.headers['set-cookie'])).not.toContain('authz-session')
    expect(await signedIn(cookie)).toBe(true)

    const jar = withCookies(cookie, res.headers['set-cookie'])
    const action = /<form method="post" action="([^"]+)"/.exec(res.body)![1]!.replace(/&amp;/g, '&')
    const done = await authz.app.inject({
      method: 'POST',
      url: action,
      headers: { ...FORM, cookie: jar },
      payload: form({ csrf: csrfIn(res.body), decision: 'sign-out' }),
    })
    expect(done.statusCode).toBe(303)
    expect(done.headers.location).toBe(`${BYE}?state=s-1`)
    expect(String(done.headers['set-cookie'])).toMatch(/__Host-authz-session=;/)
    expect(await signedIn(cookie)).toBe(false)
  })

  it('the confirmation form without a CSRF token changes nothing', async () => {
    const cookie = await session(authz)
    const res = await authz.app.inject({
      method: 'POST',
      url: '/connect/endsession/confirm',
      headers: { ...FORM, cookie },
      payload: form({ decision: 'sign-out' }),
    })
    expect(res.statusCode).toBe(403)
    expect(await signedIn(cookie)).toBe(true)
  })

  it('no session and no URI: the signed-out page', async () => {
    const res = await get('/connect/endsession')
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('<h1>You are signed out</h1>')
  })

  it.each([
    [
      'an unregistered post_logout_redirect_uri',
      { client_id: 'web', post_logout_redirect_uri: 'https://evil.example/' },
      'post_logout_redirect_uri is not registered for this client',
    ],
    [
      'a redirect URI of the client is not a post-logout one',
      { client_id: 'web', post_logout_redirect_uri: 'https://web.example/cb' },
      'post_logout_redirect_uri is not registered for this client',
    ],
    ['a URI without a client', { post_logout_redirect_uri: BYE }, 'post_logout_redirect_uri needs id_token_hint or client_id'],
    [
      'a forged id_token_hint',
      { id_token_hint: 'a.b.c', post_logout_redirect_uri: BYE },
      'id_token_hint is not an ID token issued by this server',
    ],
    ['an unknown client', { client_id: 'nobody', post_logout_redirect_uri: BYE }, 'client_id is unknown or the client is disabled'],
  ])('%s: a page, no redirect, the session stays', async (_name, params, description) => {
    const cookie = await session(authz)
    const res = await get(endsession(params), cookie)
    expect(res.statusCode).toBe(400)
    expect(res.headers.location).toBeUndefined()
    expect(res.body).toContain(`Details: ${description}.`)
    expect(await signedIn(cookie)).toBe(true)
  })

  it("client_id that is not the hint's audience", async () => {
    const { cookie, idToken } = await signedInWithIdToken()
    const res = await get(endsession({ id_token_hint: idToken, client_id: 'spa' }), cookie)
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('client_id does not match id_token_hint')
  })
})
