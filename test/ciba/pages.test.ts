// The approval pages: sign-in, session cookie, CSRF, wrong user, already decided / unknown
// requests, headers (CSP, no-store) and escaping.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseCookies, serializeCookie } from '../../src/http/cookies.js'
import { PAGE_CSP } from '../../src/pages/html.js'
import { handleHash } from '../../src/stores/postgres/columns.js'
import { cookiesFrom, csrfIn, decide, lastRequestId, signIn } from './approve-helper.js'
import { BANK, createCibaTestApp, FORM, form, startCiba, type CibaTestApp } from './harness.js'

let t: CibaTestApp
beforeAll(async () => {
  t = await createCibaTestApp()
})
afterAll(() => t.close())

async function start(params: Record<string, string> = {}) {
  const res = await startCiba(t, { ...BANK, scope: 'openid email orders.read', login_hint: 'alice', ...params })
  expect(res.statusCode).toBe(200)
  return lastRequestId(t)
}

describe('cookies', () => {
  it('parses a Cookie header and serializes Set-Cookie', () => {
    expect({ ...parseCookies('a=1; b="two"; a=3; bad; c=%E2%9C%93; d=%ZZ') }).toEqual({ a: '1', b: 'two', c: '✓', d: '%ZZ' })
    expect({ ...parseCookies(undefined) }).toEqual({})
    expect(serializeCookie('s', 'v v', { path: '/ciba', secure: true, maxAge: 60 })).toBe('s=v%20v; Path=/ciba; Max-Age=60; HttpOnly; Secure; SameSite=Lax')
    expect(serializeCookie('s', 'v', { path: '/ciba', secure: false })).toBe('s=v; Path=/ciba; HttpOnly; SameSite=Lax')
  })
})

describe('approval pages', () => {
  it('shows an accessible sign-in form with a CSRF token, CSP and no-store', async () => {
    const id = await start()
    const res = await t.app.inject({ method: 'GET', url: `/ciba/approve?request=${id}` })
    expect(res.statusCode).toBe(200)
    expect(res.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8', 'content-security-policy': PAGE_CSP, 'cache-control': 'no-store', 'x-frame-options': 'DENY',
    })
    expect(PAGE_CSP).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/)
    expect(res.body).toContain('<html lang="en">')
    expect(res.body).toContain('<label for="username">Username</label>')
    expect(res.body).toContain('<label for="password">Password</label>')
    expect(res.body).not.toContain('<script')
    expect([res.headers['set-cookie']].flat()).toHaveLength(1)
    expect([res.headers['set-cookie']].flat()[0]).toMatch(/^authz_ciba_csrf=[A-Za-z0-9_-]{43}; Path=\/ciba; HttpOnly; Secure; SameSite=Lax$/)
    expect(csrfIn(res.body)).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it('signs in with a hashed session cookie and shows client, scopes, binding message and idp, escaped', async () => {
    const id = await start({ binding_message: '<b>A1</b>', acr_values: 'idp:corp-ad' })
    const { res, cookie } = await signIn(t, id, 'alice', 'alice-pw')
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`/ciba/approve?request=${id}`)
    const session = [res.headers['set-cookie']].flat().find((c) => c!.startsWith('authz_ciba_session='))!
    expect(session).toMatch(/^authz_ciba_session=[A-Za-z0-9_-]{43}; Path=\/ciba; Max-Age=900; HttpOnly; Secure; SameSite=Lax$/)
    const value = parseCookies(cookie).authz_ciba_session!
    const { rows } = await t.db.query('SELECT id_hash, subject_id FROM user_sessions')
    expect(rows).toContainEqual({ id_hash: handleHash(value), subject_id: 'u-alice' })
    const page = await t.app.inject({ method: 'GET', url: `/ciba/approve?request=${id}`, headers: { cookie } })
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('<h1>Bank &lt;App&gt; asks for your approval</h1>')
    expect(page.body).toContain('<p class="binding" id="binding-message">&lt;b&gt;A1&lt;/b&gt;</p>')
    expect(page.body).toContain('<li>Your e-mail address <small>(email)</small></li>')
    expect(page.body).toContain('<li>Read your orders <small>(orders.read)</small></li>')
    expect(page.body).toContain('Identity provider: <strong>corp-ad</strong>')
    expect(page.body).toContain('<button type="submit" name="decision" value="approve">Approve</button>')
    expect(page.body).toContain('<button type="submit" name="decision" value="deny">Deny</button>')
  })

  it('refuses a wrong password (401) and another user (403) and leaves the request pending', async () => {
    const id = await start()
    const bad = await signIn(t, id, 'alice', 'nope')
    expect(bad.res.statusCode).toBe(401)
    expect(bad.res.body).toContain('The username or password is incorrect.')
    const other = await signIn(t, id, 'bob', 'bob-pw')
    expect(other.res.statusCode).toBe(403)
    expect(other.res.body).toContain('You signed in as a different user')
    expect(parseCookies(other.cookie).authz_ciba_session).toBeUndefined()
    const { rows } = await t.db.query('SELECT status FROM ciba_requests WHERE id = $1', [id])
    expect(rows).toEqual([{ status: 'pending' }])
  })

  it('refuses a sign-in or a decision without the right CSRF token', async () => {
    const id = await start()
    const page = await t.app.inject({ method: 'GET', url: `/ciba/approve?request=${id}` })
    const pre = cookiesFrom(page.headers['set-cookie'])
    const forged = await t.app.inject({
      method: 'POST', url: `/ciba/approve/sign-in?request=${id}`, headers: { ...FORM, cookie: pre },
      payload: form({ csrf: 'x'.repeat(43), username: 'alice', password: 'alice-pw' }),
    })
    expect(forged.statusCode).toBe(403)
    expect(forged.body).toContain('The form expired')
    const { cookie } = await signIn(t, id, 'alice', 'alice-pw')
    const decision = await t.app.inject({
      method: 'POST', url: `/ciba/approve/decision?request=${id}`, headers: { ...FORM, cookie },
      payload: form({ csrf: csrfIn(page.body), decision: 'approve' }), // the pre-session token is not the session's
    })
    expect(decision.statusCode).toBe(403)
    const noSession = await t.app.inject({
      method: 'POST', url: `/ciba/approve/decision?request=${id}`, headers: FORM, payload: form({ decision: 'approve' }),
    })
    expect(noSession.statusCode).toBe(401)
    expect(noSession.body).toContain('Your session has ended')
    expect((await t.db.query('SELECT status FROM ciba_requests WHERE id = $1', [id])).rows).toEqual([{ status: 'pending' }])
  })

  it('says so for unknown, decided and expired requests', async () => {
    const unknown = await t.app.inject({ method: 'GET', url: '/ciba/approve?request=nope' })
    expect(unknown.statusCode).toBe(404)
    expect(unknown.body).toContain('<h1>Request not found</h1>')
    expect((await t.app.inject({ method: 'GET', url: '/ciba/approve' })).statusCode).toBe(404)
    const id = await start()
    expect((await decide(t, id, 'approve')).statusCode).toBe(200)
    const again = await t.app.inject({ method: 'GET', url: `/ciba/approve?request=${id}` })
    expect(again.statusCode).toBe(410)
    expect(again.body).toContain('<h1>This request was already approved</h1>')
    expect(again.headers['content-security-policy']).toBe(PAGE_CSP)
  })
})
