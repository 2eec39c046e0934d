// GET and POST /connect/authorize: what the browser sees at every step. An unknown or disabled
// client and a missing or unregistered redirect URI get a page and never a redirect; every other
// error goes back to the redirect URI with error, error_description, state and iss (RFC 9207).
// Sign-in through the shared page (it comes back here), consent through the shared decision
// screen, then a code; prompt none/login/consent and max_age; form_post.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { handleHash } from '../../../src/stores/columns.postgres.js'
import type { TestApp } from '../../helpers/app.js'
import { FORM, form, TEST_ISSUER } from '../../helpers/app.js'
import { authorizeUrl, codeFor, consent, createAuthorizeTestApp, located, pkcePair, session, signInAt, SPA_CB, WEB_CB } from './harness.js'

let authz: TestApp
beforeAll(async () => {
  authz = await createAuthorizeTestApp()
})
afterAll(() => authz?.close())

const get = (url: string, cookie = '') => authz.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} })

/** The error redirect's parameters, after checking it goes to `redirectUri`. */
function errorAt(res: Awaited<ReturnType<typeof get>>, redirectUri = WEB_CB) {
  expect(res.statusCode).toBe(303)
  const url = located(res)
  expect(`${url.origin}${url.pathname}`).toBe(redirectUri)
  return Object.fromEntries(url.searchParams)
}

describe('errors shown as a page, never redirected', () => {
  it.each([
    ['an unknown client', { client_id: 'nobody' }],
    ['a disabled client', { client_id: 'off', redirect_uri: 'https://off.example/cb' }],
    ['a missing client_id', { client_id: undefined }],
    ['an unregistered redirect URI', { redirect_uri: 'https://evil.example/cb' }],
    ['a redirect URI that differs in one character', { redirect_uri: `${WEB_CB}/` }],
    ['no redirect URI when two are registered', { redirect_uri: undefined }],
  ])('%s', async (_name, params) => {
    const res = await get(authorizeUrl(params))
    expect(res.statusCode).toBe(400)
    expect(res.headers.location).toBeUndefined()
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.body).toContain('This request is not valid')
    // Named as text at most (below), never a link, a form's target or a redirect.
    expect(res.body).not.toMatch(/(href|action|src)="[^"]*(evil\.example|web\.example)/)
  })

  it('names the redirect URI that was sent: on the page, and in the log with the registered ones', async () => {
    const from = authz.logs.length
    const res = await get(authorizeUrl({ redirect_uri: `${WEB_CB}/` }))
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('<p>Details: redirect_uri is not registered for this client.</p>')
    expect(res.body).toContain(
      `<p>The redirect URI the application sent is ${WEB_CB}/, which is not registered for it. Redirect URIs must match exactly, character for character.</p>`,
    )
    // The client's configuration stays off the page.
    expect(res.body).not.toContain('https://web.example/other')
    const lines = authz.logs.slice(from).map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(lines.filter((l) => l.msg === 'redirect_uri is not registered for this client')).toEqual([
      expect.objectContaining({
        level: 30,
        error: 'invalid_request',
        client_id: 'web',
        redirect_uri: `${WEB_CB}/`,
        registered_redirect_uris: [WEB_CB, 'https://web.example/other'],
      }),
    ])
  })

  it("names it in the reader's language", async () => {
    const res = await authz.app.inject({
      method: 'GET',
      url: authorizeUrl({ redirect_uri: `${WEB_CB}/` }),
      headers: { 'accept-language': 'de' },
    })
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('<html lang="de">')
    expect(res.body).toContain(
      `<p>Die Anwendung hat die Weiterleitungsadresse ${WEB_CB}/ gesendet, die für sie nicht registriert ist. Weiterleitungsadressen müssen Zeichen für Zeichen übereinstimmen.</p>`,
    )
  })

  it('escapes the redirect URI it names', async () => {
    const res = await get(authorizeUrl({ redirect_uri: 'https://evil.example/"><script>alert(1)</script>' }))
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain(
      'The redirect URI the application sent is https://evil.example/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;,',
    )
    expect(res.body).not.toContain('<script')
  })

  it('logs the registered redirect URIs when none was sent and the client has several', async () => {
    const from = authz.logs.length
    const res = await get(authorizeUrl({ redirect_uri: undefined }))
    expect(res.body).toContain('<p>Details: redirect_uri is missing.</p>')
    const lines = authz.logs.slice(from).map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(lines.filter((l) => l.msg === 'redirect_uri is missing')).toEqual([
      expect.objectContaining({
        error: 'invalid_request',
        client_id: 'web',
        registered_redirect_uris: [WEB_CB, 'https://web.example/other'],
      }),
    ])
  })

  it('a repeated client_id or redirect_uri', async () => {
    for (const url of [`${authorizeUrl()}&client_id=web`, `${authorizeUrl()}&redirect_uri=${encodeURIComponent(WEB_CB)}`]) {
      const res = await get(url)
      expect(res.statusCode).toBe(400)
      expect(res.headers.location).toBeUndefined()
      expect(res.body).toContain('is repeated')
    }
  })
})

describe('errors redirected with state and iss', () => {
  it.each([
    ['response_type token', { response_type: 'token' }, 'unsupported_response_type', 'response_type must be code'],
    ['no response_type', { response_type: undefined }, 'invalid_request', 'response_type is missing'],
    ['an unknown scope', { scope: 'openid nope' }, 'invalid_scope', 'scope holds a value this client may not request'],
    [
      'no code_challenge',
      { code_challenge: undefined, code_challenge_method: undefined },
      'invalid_request',
      'code_challenge is required (PKCE with S256)',
    ],
    ['code_challenge_method plain', { code_challenge_method: 'plain' }, 'invalid_request', 'code_challenge_method must be S256'],
    ['no code_challenge_method', { code_challenge_method: undefined }, 'invalid_request', 'code_challenge_method must be S256'],
    ['a malformed code_challenge', { code_challenge: 'short' }, 'invalid_request', 'code_challenge is not a S256 challenge'],
    ['prompt none with login', { prompt: 'none login' }, 'invalid_request', 'prompt none cannot be combined with other values'],
    ['an unknown prompt', { prompt: 'select_account' }, 'invalid_request', 'prompt holds an unsupported value'],
    ['a bad max_age', { max_age: '-1' }, 'invalid_request', 'max_age must be a non-negative integer'],
    ['response_mode fragment', { response_mode: 'fragment' }, 'invalid_request', 'response_mode must be query or form_post'],
    [
      'a tenant the client may not assert',
      { acr_values: 'tenant:globex' },
      'invalid_request',
      'acr_values holds a tenant this client may not assert',
    ],
    [
      'an id_token_hint that is not ours',
      { id_token_hint: 'not-a-jwt' },
      'invalid_request',
      'id_token_hint is not an ID token issued to this client',
    ],
  ])('%s', async (_name, params, error, description) => {
    const cookie = 'id_token_hint' in params ? await session(authz) : ''
    expect(errorAt(await get(authorizeUrl(params as Record<string, string | undefined>), cookie))).toEqual({
      error,
      error_description: description,
      state: 'st-1',
      iss: TEST_ISSUER,
    })
  })

  it('a repeated parameter other than client_id and redirect_uri', async () => {
    expect(errorAt(await get(`${authorizeUrl()}&scope=openid`))).toEqual({
      error: 'invalid_request',
      error_description: 'scope is repeated',
      state: 'st-1',
      iss: TEST_ISSUER,
    })
  })

  // The attack: a parameter named after what every object inherits (constructor, __proto__…) was
  // looked up among our limits, found no number, and so had no length limit at all.
  it('an over-long parameter named after an Object.prototype member is too long, like any other', async () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
      const res = await get(`${authorizeUrl()}&${name}=${'y'.repeat(201)}`)
      expect({ name, ...errorAt(res) }).toEqual({
        name,
        error: 'invalid_request',
        error_description: 'a parameter is too long',
        state: 'st-1',
        iss: TEST_ISSUER,
      })
    }
  })

  it('a client that may not use the flow: unauthorized_client', async () => {
    const res = await get(authorizeUrl({ client_id: 'cc-only', redirect_uri: 'https://cc.example/cb', scope: 'orders.read' }))
    expect(errorAt(res, 'https://cc.example/cb')).toEqual({
      error: 'unauthorized_client',
      error_description: 'the client may not use the authorization code flow',
      state: 'st-1',
      iss: TEST_ISSUER,
    })
  })

  it('without state, no state', async () => {
    expect(errorAt(await get(authorizeUrl({ state: undefined, response_type: 'token' })))).toEqual({
      error: 'unsupported_response_type',
      error_description: 'response_type must be code',
      iss: TEST_ISSUER,
    })
  })

  it('keeps a query the redirect URI has', async () => {
    await authz.app.inject({ method: 'GET', url: '/health/live' })
    const res = await get(authorizeUrl({ client_id: 'nopkce', redirect_uri: 'https://nopkce.example/cb', response_type: 'token' }))
    expect(located(res).href).toBe(
      `https://nopkce.example/cb?error=unsupported_response_type&error_description=response_type+must+be+code&state=st-1&iss=${encodeURIComponent(TEST_ISSUER)}`,
    )
  })

  it('prompt=none without a session: login_required', async () => {
    expect(errorAt(await get(authorizeUrl({ prompt: 'none' })))).toEqual({
      error: 'login_required',
      error_description: 'the user must sign in',
      state: 'st-1',
      iss: TEST_ISSUER,
    })
  })

  it('prompt=none with a session but no consent yet: consent_required', async () => {
    const cookie = await session(authz, 'bob', 'bob-pw')
    expect(errorAt(await get(authorizeUrl({ prompt: 'none' }), cookie))).toEqual({
      error: 'consent_required',
      error_description: 'the user must consent',
      state: 'st-1',
      iss: TEST_ISSUER,
    })
  })

  it('the person denies: access_denied', async () => {
    const cookie = await session(authz, 'bob', 'bob-pw')
    const res = await consent(authz, authorizeUrl(), cookie, 'deny')
    expect(errorAt(res)).toEqual({
      error: 'access_denied',
      error_description: 'the user denied the request',
      state: 'st-1',
      iss: TEST_ISSUER,
    })
  })

  it('form_post: the error is posted by a form to the redirect URI', async () => {
    const res = await get(authorizeUrl({ response_mode: 'form_post', scope: 'nope' }))
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-security-policy']).toMatch(
      /form-action 'self' https:\/\/web\.example; frame-ancestors 'none'; base-uri 'none'; script-src 'sha256-[A-Za-z0-9+/]+=*'/,
    )
    expect(res.body).toContain(`<form method="post" action="${WEB_CB}">`)
    expect(res.body).toContain('<input type="hidden" name="error" value="invalid_scope">')
    expect(res.body).toContain('<input type="hidden" name="state" value="st-1">')
    expect(res.body).toContain(`<input type="hidden" name="iss" value="${TEST_ISSUER}">`)
  })
})

describe('sign-in, consent, code', () => {
  it('sends the person to sign in, comes back, asks consent, then redirects with code, state and iss', async () => {
    const url = authorizeUrl()
    const first = await get(url)
    expect(first.statusCode).toBe(303)
    const signIn = located(first)
    expect(signIn.pathname).toBe('/account/sign-in')
    const page = await get(`${signIn.pathname}${signIn.search}`)
    expect(page.body).toContain('to continue to <strong id="client-name">Web &lt;App&gt;</strong>')
    expect(page.headers['content-security-policy']).toContain("form-action 'self' https://web.example;")
    const { cookie, next } = await signInAt(authz, `${signIn.pathname}${signIn.search}`)
    expect(next.startsWith('/connect/authorize?')).toBe(true)
    const shown = await get(next, cookie)
    expect(shown.statusCode).toBe(200)
    expect(shown.body).toContain('<h1>Web &lt;App&gt; wants to access your account</h1>')
    expect(shown.body).toContain('data-scope="openid"')
    expect(shown.body).toContain('data-scope="profile"')
    expect(shown.body).toContain('Remember this decision for Web &lt;App&gt;')
    expect(shown.headers['content-security-policy']).toContain("form-action 'self' https://web.example;")
    const res = await consent(authz, next, cookie, 'approve')
    expect(res.statusCode).toBe(303)
    const back = located(res)
    expect(`${back.origin}${back.pathname}`).toBe(WEB_CB)
    expect([...back.searchParams.keys()]).toEqual(['code', 'state', 'iss'])
    expect(back.searchParams.get('state')).toBe('st-1')
    expect(back.searchParams.get('iss')).toBe(TEST_ISSUER)
    const code = back.searchParams.get('code')!
    const row = (
      await authz.db.query(
        'SELECT kind, client_id, subject_id, data, expires_at - created_at AS life FROM persisted_grants WHERE handle_hash = $1',
        [handleHash(code)],
      )
    ).rows[0]
    expect(row).toMatchObject({
      kind: 'authorization_code',
      client_id: 'web',
      subject_id: 'u-alice',
      data: { redirectUri: WEB_CB, nonce: 'n-1', scope: 'openid profile' },
    })
    expect(JSON.stringify(row)).not.toContain(code) // stored only as a hash
  })

  it('without remember, asks again next time; with remember, goes straight to the code', async () => {
    const cookie = await session(authz, 'bob', 'bob-pw')
    expect((await consent(authz, authorizeUrl(), cookie, 'approve')).statusCode).toBe(303)
    expect((await get(authorizeUrl(), cookie)).statusCode).toBe(200) // asked again
    expect((await consent(authz, authorizeUrl(), cookie, 'approve', true)).statusCode).toBe(303)
    const again = await get(authorizeUrl(), cookie)
    expect(again.statusCode).toBe(303)
    expect(located(again).searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    // prompt=consent asks even so; prompt=none now succeeds.
    expect((await get(authorizeUrl({ prompt: 'consent' }), cookie)).statusCode).toBe(200)
    expect(located(await get(authorizeUrl({ prompt: 'none' }), cookie)).searchParams.has('code')).toBe(true)
  })

  it('requireConsent false: no consent screen', async () => {
    const cookie = await session(authz)
    const res = await get(authorizeUrl({ client_id: 'spa', redirect_uri: SPA_CB }), cookie)
    expect(res.statusCode).toBe(303)
    expect(located(res).searchParams.has('code')).toBe(true)
  })

  it('a redirect URI may be omitted when the client registered exactly one', async () => {
    const cookie = await session(authz)
    const res = await get(authorizeUrl({ client_id: 'spa', redirect_uri: undefined }), cookie)
    expect(`${located(res).origin}${located(res).pathname}`).toBe(SPA_CB)
  })

  it('POST /connect/authorize takes the parameters from the form', async () => {
    const cookie = await session(authz)
    const q = new URL(authorizeUrl({ client_id: 'spa', redirect_uri: SPA_CB }), TEST_ISSUER).searchParams
    const res = await authz.app.inject({ method: 'POST', url: '/connect/authorize', headers: { ...FORM, cookie }, payload: q.toString() })
    expect(res.statusCode).toBe(303)
    expect(located(res).searchParams.get('state')).toBe('st-1')
  })

  it('form_post: the code is posted by a form', async () => {
    const cookie = await session(authz)
    const res = await get(authorizeUrl({ client_id: 'spa', redirect_uri: SPA_CB, response_mode: 'form_post' }), cookie)
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain(`<form method="post" action="${SPA_CB}">`)
    expect(res.body).toMatch(/<input type="hidden" name="code" value="[A-Za-z0-9_-]{43}">/)
    expect(res.body).toContain(`<input type="hidden" name="iss" value="${TEST_ISSUER}">`)
  })

  it('prompt=login signs the person in again once, then issues the code (no loop)', async () => {
    const cookie = await session(authz)
    const url = authorizeUrl({ client_id: 'spa', redirect_uri: SPA_CB, prompt: 'login' })
    const res = await get(url, cookie)
    expect(located(res).pathname).toBe('/account/sign-in')
    authz.clock.advance(1)
    const again = await signInAt(authz, `${located(res).pathname}${located(res).search}`, 'alice', 'alice-pw', cookie)
    const done = await get(again.next, again.cookie)
    expect(done.statusCode).toBe(303)
    expect(located(done).searchParams.has('code')).toBe(true)
    // The marker is bound to the request: moved to another one (other state), it does not count.
    const marker = new URL(again.next, TEST_ISSUER).searchParams.get('sign_in')!
    const moved = `${authorizeUrl({ client_id: 'spa', redirect_uri: SPA_CB, prompt: 'login', state: 'other' })}&sign_in=${marker}`
    expect(located(await get(moved, again.cookie)).pathname).toBe('/account/sign-in')
  })

  it('max_age: an older sign-in is asked again; max_age=0 does not loop', async () => {
    const cookie = await session(authz)
    authz.clock.advance(120)
    const url = authorizeUrl({ client_id: 'spa', redirect_uri: SPA_CB, max_age: '60' })
    expect(located(await get(url, cookie)).pathname).toBe('/account/sign-in')
    expect(
      located(await get(authorizeUrl({ client_id: 'spa', redirect_uri: SPA_CB, max_age: '600' }), cookie)).searchParams.has('code'),
    ).toBe(true)
    const zero = await get(authorizeUrl({ client_id: 'spa', redirect_uri: SPA_CB, max_age: '0' }), cookie)
    const again = await signInAt(authz, `${located(zero).pathname}${located(zero).search}`, 'alice', 'alice-pw', cookie)
    authz.clock.advance(5)
    expect(located(await get(again.next, again.cookie)).searchParams.has('code')).toBe(true)
  })

  it('a consent form without a CSRF token is refused with a page and issues nothing', async () => {
    const cookie = await session(authz, 'bob', 'bob-pw')
    const url = authorizeUrl().replace('/connect/authorize?', '/connect/authorize/consent?')
    const res = await authz.app.inject({ method: 'POST', url, headers: { ...FORM, cookie }, payload: form({ decision: 'approve' }) })
    expect(res.statusCode).toBe(403)
    expect(res.headers.location).toBeUndefined()
    expect(res.body).toContain('Form not accepted')
  })

  it('codeFor helper sanity: a public client gets its code', async () => {
    const { back } = await codeFor(authz, await session(authz), {}, 'spa')
    expect(back.searchParams.get('iss')).toBe(TEST_ISSUER)
    expect(pkcePair().verifier).toHaveLength(43)
  })
})

describe('discovery and logs', () => {
  it('serves one document at both well-known paths (OIDC Discovery §4, RFC 8414 §3)', async () => {
    const oidc = await get('/.well-known/openid-configuration')
    const oauth = await get('/.well-known/oauth-authorization-server')
    expect(oauth.statusCode).toBe(200)
    expect(oauth.json()).toEqual(oidc.json())
    expect(oidc.json()).toMatchObject({
      issuer: TEST_ISSUER,
      authorization_endpoint: `${TEST_ISSUER}/connect/authorize`,
      userinfo_endpoint: `${TEST_ISSUER}/connect/userinfo`,
      end_session_endpoint: `${TEST_ISSUER}/connect/endsession`,
      response_types_supported: ['code'],
      response_modes_supported: ['query', 'form_post'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256', 'ES256'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      scopes_supported: ['email', 'offline_access', 'openid', 'profile', 'orders.read', 'orders.write'],
    })
    expect(oidc.json().grant_types_supported).toContain('authorization_code')
    expect(oidc.json().claims_supported).toEqual(
      expect.arrayContaining(['sub', 'name', 'family_name', 'email', 'email_verified', 'sid', 'acr', 'amr']),
    )
  })

  it("never logs an id_token_hint, not even inside the sign-in page's return_to", async () => {
    const hint = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLWhlcmU'
    const res = await get(authorizeUrl({ id_token_hint: hint }))
    const signIn = located(res)
    await get(`${signIn.pathname}${signIn.search}`)
    expect(authz.logs.join('\n')).not.toContain('c2lnbmF0dXJlLWhlcmU')
  })
})

describe('bad input in a POSTed authorization request', () => {
  it('a control character in client_id is a page, not a server error', async () => {
    const res = await authz.app.inject({
      method: 'POST',
      url: '/connect/authorize',
      headers: FORM,
      payload: 'client_id=we%00b&response_type=code',
    })
    expect(res.statusCode).toBe(400)
    expect(res.headers.location).toBeUndefined()
    expect(res.body).toContain('client_id contains control characters')
  })

  it('and at the logout endpoint', async () => {
    const res = await authz.app.inject({ method: 'POST', url: '/connect/endsession', headers: FORM, payload: 'client_id=we%00b' })
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('client_id contains control characters')
  })
})
