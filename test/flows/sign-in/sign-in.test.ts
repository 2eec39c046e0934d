// The shared sign-in page over HTTP: return targets (a wrong one is ignored), one message for
// every failure, a new session id at every sign-in, the Origin check and the CSRF token of every
// form, sign-out, idle expiry, and cookie names and flags by scheme (including behind a proxy).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { PAGE_HEADERS } from '../../../src/pages/html.js'
import { unknownUsernameDigest, FORM, form } from '../../helpers/app.js'
import { SIGN_IN_FAILED } from '../../../src/pages/sign-in.js'
import { handleHash } from '../../../src/stores/columns.postgres.js'
import { approvalPath, lastRequestId } from '../ciba/approve-helper.js'
import { BANK, createCibaTestApp, startCiba, TEST_ISSUER, type CibaTestApp } from '../ciba/harness.js'
import { cookieValue, csrfIn, withCookies } from '../../helpers/http.js'
import { signInPath, signInWithForm } from '../../helpers/sign-in.js'

const SESSION = '__Host-authz-session'
let authz: CibaTestApp
beforeAll(async () => {
  authz = await createCibaTestApp({ env: { LOCKOUT_THRESHOLD: '2' } })
})
afterAll(() => authz?.close())
// At most 5 pending CIBA requests per user: each test starts from none.
afterEach(async () => {
  await authz.db.query('DELETE FROM ciba_requests')
})

async function pendingRequest() {
  expect((await startCiba(authz, { ...BANK, scope: 'openid', login_hint: 'alice' })).statusCode).toBe(200)
  return lastRequestId(authz)
}

const account = (cookie: string) => authz.app.inject({ method: 'GET', url: '/account', headers: { cookie } })

describe('return target', () => {
  it('returns to a registered flow the flow recognises, and names its client', async () => {
    const id = await pendingRequest()
    const page = await authz.app.inject({ method: 'GET', url: signInPath(approvalPath(id)) })
    expect(page.body).toContain('to continue to <strong id="client-name">Bank &lt;App&gt;</strong>')
    const { res } = await signInWithForm(authz.app, { returnTo: approvalPath(id) }, 'alice', 'alice-pw')
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(approvalPath(id))
  })

  it.each(
    [
      'https://evil.example/',
      '//evil.example/ciba/approve',
      '/\\evil.example',
      '/ciba/approve?request=nope',
      '/connect/token',
      'javascript:alert(1)',
      ' /account',
      '/account#x',
      `/ciba/approve?request=x${'y'.repeat(5000)}`,
      '/%2F/evil.example',
    ].map((target) => [target.length > 60 ? `${target.slice(0, 40)}… (${target.length} characters)` : target, target]),
  )('ignores %s: the page names no application and the person lands on /account', async (_name, target) => {
    const page = await authz.app.inject({ method: 'GET', url: signInPath(target) })
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('<p class="lead">to your account</p>')
    expect(page.body).toContain('<form method="post" action="/account/sign-in">')
    expect(page.body).not.toContain('evil')
    const { res } = await signInWithForm(authz.app, { returnTo: target }, 'alice', 'alice-pw')
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/account')
  })
})

describe('failures', () => {
  it('shows one page for an unknown user, a wrong password, a disabled account and a locked one', async () => {
    const returnTo = approvalPath(await pendingRequest())
    const page = async (username: string, password: string) => {
      const { res } = await signInWithForm(authz.app, { returnTo: returnTo }, username, password)
      expect(res.headers['set-cookie']).toBeUndefined() // no session
      return {
        status: res.statusCode,
        // The CSRF tokens and the passkey offer's challenge are random on every page.
        body: res.body
          .replace(/name="csrf" value="[^"]+"/g, '')
          .replace(/data-options="[^"]*"/g, '')
          .replace(/name="username" type="text" value="[^"]*"/, ''),
      }
    }
    const unknown = await page('mallory', 'alice-pw')
    const wrong = await page('bob', 'wrong')
    await page('bob', 'wrong') // LOCKOUT_THRESHOLD=2: bob is locked now
    const locked = await page('bob', 'bob-pw')
    const disabled = await page('carol', 'carol-pw')
    expect(unknown.status).toBe(401)
    expect(unknown.body).toContain(SIGN_IN_FAILED)
    expect([wrong, locked, disabled]).toEqual([unknown, unknown, unknown])
    const reasons = authz.logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'sign-in failed')
      .map((l) => [l.username ?? l.username_hash, l.reason, l.client_id])
    const mallory = await unknownUsernameDigest(authz.db, 'mallory') // no account: only its keyed digest
    expect(reasons.slice(-5)).toEqual([
      [mallory, 'unknown_user', 'bank'],
      ['bob', 'bad_password', 'bank'],
      ['bob', 'bad_password', 'bank'],
      ['bob', 'locked', 'bank'],
      ['carol', 'disabled', 'bank'],
    ])
    expect(authz.logs.join('\n')).not.toContain('bob-pw')
  })
})

describe('session', () => {
  it('gets a new id at every sign-in, never the one the browser brought, and the old one stops working', async () => {
    const planted = `${SESSION}=${'p'.repeat(43)}`
    const first = await signInWithForm(authz.app, { returnTo: '/account' }, 'alice', 'alice-pw', planted)
    const a = cookieValue(first.cookie, SESSION)!
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(a).not.toBe('p'.repeat(43))
    const again = await authz.app.inject({ method: 'GET', url: signInPath('/account'), headers: { cookie: first.cookie } })
    expect(again.body).toContain('You are signed in as <strong>alice</strong>. Signing in here replaces that session.')
    const second = await signInWithForm(authz.app, { returnTo: '/account' }, 'alice', 'alice-pw', first.cookie)
    expect(second.res.statusCode).toBe(303)
    const b = cookieValue(second.cookie, SESSION)!
    expect(b).not.toBe(a)
    expect((await account(`${SESSION}=${a}`)).statusCode).toBe(303)
    expect((await account(`${SESSION}=${b}`)).statusCode).toBe(200)
    const { rows } = await authz.db.query('SELECT count(*)::int AS n FROM user_sessions WHERE id_hash = $1', [handleHash(a)])
    expect(rows).toEqual([{ n: 0 }])
  })

  it('ends after SESSION_IDLE_TIMEOUT without use (clock moved)', async () => {
    const { cookie } = await signInWithForm(authz.app, { returnTo: '/account' }, 'alice', 'alice-pw')
    authz.clock.advance(1799)
    expect((await account(cookie)).statusCode).toBe(200)
    authz.clock.advance(1799)
    expect((await account(cookie)).statusCode).toBe(200)
    authz.clock.advance(1801)
    const res = await account(cookie)
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/account/sign-in?return_to=%2Faccount')
  })

  it('signs out: the session is gone, its cookie cleared, the page says so', async () => {
    const { cookie } = await signInWithForm(authz.app, { returnTo: '/account' }, 'alice', 'alice-pw')
    const ask = await authz.app.inject({ method: 'GET', url: '/account/sign-out', headers: { cookie } })
    expect(ask.body).toContain('<h1>Sign out?</h1>')
    const res = await authz.app.inject({
      method: 'POST',
      url: '/account/sign-out',
      headers: { ...FORM, cookie },
      payload: form({ csrf: csrfIn(ask.body) }),
    })
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('<h1>You are signed out</h1>')
    expect([res.headers['set-cookie']].flat()).toContainEqual(
      expect.stringMatching(
        new RegExp(`^${SESSION}=; Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; Secure; SameSite=Lax$`),
      ),
    )
    expect((await account(cookie)).statusCode).toBe(303)
    const { rows } = await authz.db.query('SELECT count(*)::int AS n FROM user_sessions WHERE id_hash = $1', [
      handleHash(cookieValue(cookie, SESSION)!),
    ])
    expect(rows).toEqual([{ n: 0 }])
  })
})

describe('form POSTs: Origin and CSRF token', () => {
  /** A signed-in browser's cookies and the token of its open approval page. */
  async function approvalForm() {
    const id = await pendingRequest()
    const { cookie } = await signInWithForm(authz.app, { returnTo: approvalPath(id) }, 'alice', 'alice-pw')
    const page = await authz.app.inject({ method: 'GET', url: approvalPath(id), headers: { cookie } })
    return { id, cookie, csrf: csrfIn(page.body) }
  }
  const post = (f: { id: string; cookie: string; csrf?: string }, headers: Record<string, string> = {}) =>
    authz.app.inject({
      method: 'POST',
      url: approvalPath(f.id),
      headers: { ...FORM, cookie: f.cookie, ...headers },
      payload: form({ ...(f.csrf ? { csrf: f.csrf } : {}), decision: 'approve' }),
    })
  const status = async (id: string) => (await authz.db.query('SELECT status FROM ciba_requests WHERE id = $1', [id])).rows[0]

  it.each([
    ['a foreign Origin', { origin: 'https://evil.example' }],
    ['Origin null', { origin: 'null' }],
    ['a sibling subdomain', { origin: 'https://evil.authz.test', 'sec-fetch-site': 'same-site' }],
    ['Sec-Fetch-Site cross-site without Origin', { 'sec-fetch-site': 'cross-site' }],
  ])('refuses %s even with the right cookie and token, with a page, changing nothing', async (_name, headers) => {
    const f = await approvalForm()
    const res = await post(f, headers)
    expect(res.statusCode).toBe(403)
    expect(res.headers).toMatchObject(PAGE_HEADERS)
    expect(res.body).toContain('This form was sent from another website, not from a page of this site.')
    expect(res.body).toContain('Nothing was changed.')
    expect(await status(f.id)).toEqual({ status: 'pending' })
  })

  it("refuses a missing token and another browser's token", async () => {
    const f = await approvalForm()
    const other = await approvalForm() // another browser (its own cookies), same user
    for (const res of [await post({ ...f, csrf: '' }), await post({ ...f, csrf: other.csrf })]) {
      expect(res.statusCode).toBe(403)
      expect(res.body).toContain('This form has expired or did not come from the page you have open here')
    }
    expect(await status(f.id)).toEqual({ status: 'pending' })
  })

  it('accepts the same origin (issuer or request), and a POST with no Origin at all on the token alone', async () => {
    const ok = async (headers: Record<string, string>) => {
      const f = await approvalForm()
      const res = await post(f, headers)
      expect(res.statusCode).toBe(200)
      expect(await status(f.id)).toEqual({ status: 'approved' })
    }
    await ok({ origin: TEST_ISSUER, 'sec-fetch-site': 'same-origin' })
    await ok({ origin: 'http://localhost:80' }) // inject's Host
    await ok({})
  })
})

describe('cookie names and flags by scheme', () => {
  let plain: CibaTestApp
  let proxied: CibaTestApp
  beforeAll(async () => {
    plain = await createCibaTestApp({ env: { ISSUER: 'http://authz.test' } })
    proxied = await createCibaTestApp({ env: { ISSUER: 'http://authz.test', TRUST_PROXY: 'true' } })
  })
  afterAll(async () => {
    await plain?.close()
    await proxied?.close()
  })
  const setCookies = async (app: CibaTestApp, headers: Record<string, string>) => {
    const page = await app.app.inject({ method: 'GET', url: '/account/sign-in', headers })
    const jar = withCookies('', page.headers['set-cookie'])
    const signed = await app.app.inject({
      method: 'POST',
      url: '/account/sign-in',
      headers: { ...FORM, ...headers, cookie: jar },
      payload: form({ csrf: csrfIn(page.body), username: 'alice', password: 'alice-pw' }),
    })
    expect(signed.statusCode).toBe(303)
    return [signed.headers['set-cookie']].flat().map((c) => c!.replace(/=[A-Za-z0-9_-]{43};/, '=…;'))
  }

  it('uses authz-session without Secure over plain http, ignoring X-Forwarded-Proto from an untrusted peer', async () => {
    expect(await setCookies(plain, { 'x-forwarded-proto': 'https' })).toEqual([
      'authz-session=…; Max-Age=36000; Path=/; HttpOnly; SameSite=Lax',
      'authz-csrf=…; Path=/; HttpOnly; SameSite=Lax',
    ])
  })

  it('uses __Host- names and Secure when a trusted proxy says the request came over https', async () => {
    expect(await setCookies(proxied, { 'x-forwarded-proto': 'https' })).toEqual([
      '__Host-authz-session=…; Max-Age=36000; Path=/; HttpOnly; Secure; SameSite=Lax',
      '__Host-authz-csrf=…; Path=/; HttpOnly; Secure; SameSite=Lax',
    ])
    expect(await setCookies(proxied, {})).toEqual([
      'authz-session=…; Max-Age=36000; Path=/; HttpOnly; SameSite=Lax',
      'authz-csrf=…; Path=/; HttpOnly; SameSite=Lax',
    ])
  })
})
