// Passkeys over HTTP, as a browser without JavaScript (or a forger) meets them: the sign-in page's
// passkey button and autofill hint and the script they load (CSP script-src 'self' on those pages
// only); the passkey page's answers to a missing, malformed or unknown credential (a clear page,
// counted toward the lockout, audited, no session); the account page's section; an issuer on an IP
// address and PASSKEYS=false offering none. The ceremonies themselves run in Chromium
// (test/e2e/passkey-browser.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FORM, form, type TestApp } from '../../helpers/app.js'
import { csrfIn, withCookies } from '../../helpers/http.js'
import { createAuthorizeTestApp, session } from '../authorization-code/harness.js'

const PASSKEY = '/account/sign-in/passkey'

/** Opens `url` (keeping cookies) and posts `fields` from its form with its CSRF token. */
async function post(authz: TestApp, url: string, fields: Record<string, string>, cookie = '') {
  const page = await authz.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} })
  const jar = withCookies(cookie, page.headers['set-cookie'])
  return authz.app.inject({ method: 'POST', url, headers: { ...FORM, cookie: jar }, payload: form({ csrf: csrfIn(page.body), ...fields }) })
}

const audits = (authz: TestApp, event: string) =>
  authz.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.log === 'audit' && l.event === event)

describe('where passkeys are offered', () => {
  let authz: TestApp
  beforeAll(async () => {
    authz = await createAuthorizeTestApp({ PASSKEYS: 'true', LOCKOUT_THRESHOLD: '3' })
  })
  afterAll(() => authz?.close())

  it('offers a passkey beside the password, in the username autofill too, with our script only', async () => {
    const res = await authz.app.inject({ method: 'GET', url: '/account/sign-in' })
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('<button class="button secondary" type="submit" id="passkey-sign-in">Sign in with a passkey</button>')
    expect(res.body).toContain('autocomplete="username webauthn"')
    expect(res.body).toContain(
      `<form method="post" action="${PASSKEY}" class="passkey" data-passkey="sign-in" data-autofill data-options="`,
    )
    expect(res.headers['content-security-policy']).toBe(
      "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; script-src 'self'",
    )
    const options = JSON.parse(/data-options="([^"]+)"/.exec(res.body)![1]!.replace(/&quot;/g, '"')) as Record<string, unknown>
    expect(options).toEqual({
      rpId: 'authz.test',
      challenge: expect.stringMatching(/^[\w-]{96}$/),
      timeout: 300000,
      userVerification: 'required',
    })
    const scripts = [...res.body.matchAll(/<script src="([^"]+)" defer><\/script>/g)].map((m) => m[1]!)
    expect(scripts).toEqual([
      expect.stringMatching(/^\/assets\/webauthn-[\w-]{16}\.js$/),
      expect.stringMatching(/^\/assets\/passkeys-[\w-]{16}\.js$/),
    ])
    for (const src of scripts) {
      const js = await authz.app.inject({ method: 'GET', url: src })
      expect(js.statusCode).toBe(200)
      expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8')
      expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    }
    // A page without a passkey form loads no script and allows none.
    const device = await authz.app.inject({ method: 'GET', url: '/device' })
    expect(device.headers['content-security-policy']).not.toContain('script-src')
    expect(device.body).not.toContain('<script')
  })

  it('answers a form without an answer (no JavaScript) with a page saying what is needed', async () => {
    const res = await post(authz, PASSKEY, {})
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('<div class="alert" role="alert"><p>Signing in with a passkey needs JavaScript.')
    expect(res.headers['set-cookie'] ?? '').not.toContain('authz-session=')
  })

  it('refuses a malformed answer and an unknown passkey, counted and audited, without a session', async () => {
    const malformed = await post(authz, PASSKEY, { webauthn_response: '{"id":' })
    expect(malformed.statusCode).toBe(401)
    expect(malformed.body).toContain('That passkey could not be used to sign in. Try again, or sign in with your password.')
    const unknown = await post(authz, PASSKEY, {
      webauthn_response: JSON.stringify({ id: 'bm9wZQ', rawId: 'bm9wZQ', type: 'public-key', response: {}, clientExtensionResults: {} }),
    })
    expect(unknown.statusCode).toBe(401)
    expect(unknown.headers['set-cookie'] ?? '').not.toContain('authz-session=')
    expect(audits(authz, 'passkey.failed').map((e) => e.reason)).toEqual(['malformed', 'unknown_credential'])
    const { rows } = await authz.db.query<{ source: string; failures: number }>(
      `SELECT source, failures FROM failure_counters WHERE kind = 'user' AND source = 'unknown-passkey'`,
    )
    expect(rows).toEqual([{ source: 'unknown-passkey', failures: 1 }])
  })

  it('shows the passkeys section on the account page, and explains a form sent without JavaScript', async () => {
    const cookie = await session(authz)
    const page = await authz.app.inject({ method: 'GET', url: '/account', headers: { cookie } })
    expect(page.body).toContain('<h2 id="passkeys-heading">Passkeys</h2>')
    expect(page.body).toContain('<p class="empty">You have no passkeys yet.</p>')
    expect(page.body).toContain('<label for="passkey_name">Name of the new passkey (optional)</label>')
    expect(page.body).toContain('<button class="button primary small" type="submit" id="add-passkey">Add a passkey</button>')
    const registration = JSON.parse(/data-passkey="register" data-options="([^"]+)"/.exec(page.body)![1]!.replace(/&quot;/g, '"'))
    expect(registration).toMatchObject({
      rp: { id: 'authz.test' },
      user: { name: 'alice' },
      attestation: 'none',
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    })
    const noScript = await post(authz, '/account', { action: 'add-passkey', passkey_name: 'Laptop' }, cookie)
    expect(noScript.statusCode).toBe(400)
    expect(noScript.body).toContain('<div class="alert" role="alert"><p>Adding a passkey needs JavaScript.')
    const unknown = await post(authz, '/account', { action: 'remove-passkey', credential_id: 'bm9wZQ' }, cookie)
    expect(unknown.statusCode).toBe(404)
    expect(unknown.body).toContain('That passkey has been removed already.')
    expect((await authz.db.query('SELECT 1 FROM passkeys')).rows).toEqual([])
  })

  it('tells a signed-in person without a passkey, asked for one, how to add one', async () => {
    const cookie = await session(authz)
    const res = await authz.app.inject({ method: 'GET', url: PASSKEY, headers: { cookie } })
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('You have no passkey yet, alice. Add one on your account page, then sign in with it here.')
    expect(res.body).toContain('<a class="button primary" href="/account#passkeys">Add a passkey</a>')
  })
})

describe('where passkeys are not offered', () => {
  it('an issuer on an IP address: no passkey on the pages, and a warning at start', async () => {
    const authz = await createAuthorizeTestApp({ PASSKEYS: 'true', ISSUER: 'http://127.0.0.1:5000' })
    try {
      const page = await authz.app.inject({ method: 'GET', url: '/account/sign-in' })
      expect(page.body.toLowerCase()).not.toContain('passkey')
      expect(page.body).toContain('autocomplete="username"')
      expect(page.headers['content-security-policy']).not.toContain('script-src')
      expect(authz.logs.some((l) => (JSON.parse(l) as { msg: string }).msg.includes("the issuer's host is an IP address"))).toBe(true)
      const res = await authz.app.inject({ method: 'GET', url: PASSKEY })
      expect(res.statusCode).toBe(404)
      expect(res.body).not.toContain('data-passkey')
      expect(res.body).toContain('Passkeys are not offered on this site. Sign in with your password.')
    } finally {
      await authz.close()
    }
  })

  it('PASSKEYS=false (the default): no passkey on the sign-in page or the account page, no warning', async () => {
    const authz = await createAuthorizeTestApp()
    try {
      const page = await authz.app.inject({ method: 'GET', url: '/account/sign-in' })
      expect(page.body.toLowerCase()).not.toContain('passkey')
      const account = await authz.app.inject({ method: 'GET', url: '/account', headers: { cookie: await session(authz) } })
      expect(account.body.toLowerCase()).not.toContain('passkey')
      expect(authz.logs.some((l) => l.includes('IP address'))).toBe(false)
    } finally {
      await authz.close()
    }
  })
})
