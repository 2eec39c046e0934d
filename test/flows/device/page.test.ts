// The device page (RFC 8628 §3.3) over HTTP, as a browser without JavaScript uses it: the entry
// form, the code in any case with or without the dash, the shared sign-in page and back, the
// decision screen with the code to compare, approve and deny, the pages for unknown, expired and
// used codes and for a form without a session, the CSRF check, and wrong codes throttled per
// source address (§5.1), a blocked address learning nothing about any code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PAGE_CSP } from '../../../src/pages/html.js'
import { csrfIn, withCookies } from '../../helpers/http.js'
import { form, FORM, type TestApp } from '../../helpers/app.js'
import { createDeviceTestApp, decideWith, devicePath, requestIdOf, signInForDevice, start, TV } from './harness.js'

let authz: TestApp
beforeAll(async () => {
  authz = await createDeviceTestApp()
})
afterAll(() => authz.close())

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': PAGE_CSP,
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
}

let nextAddress = 1
/** Each test types from its own address, so the per-address throttle of one never meets another's. */
const newAddress = () => `10.0.0.${nextAddress++}`

const get = (url: string, opts: { cookie?: string; address?: string } = {}) =>
  authz.app.inject({ method: 'GET', url, remoteAddress: opts.address ?? '127.0.0.1', headers: opts.cookie ? { cookie: opts.cookie } : {} })

const h1 = (body: string) => /<h1>([^<]*)<\/h1>/.exec(body)?.[1]

describe('device page', () => {
  it('GET /device shows the code entry form, a GET form to the same page', async () => {
    const res = await get('/device')
    expect(res.statusCode).toBe(200)
    expect(res.headers).toMatchObject(PAGE_HEADERS)
    expect(h1(res.body)).toBe('Connect a device')
    expect(res.body).toContain('<form method="get" action="/device">')
    expect(res.body).toContain('<input id="user_code" name="user_code" type="text"')
  })

  it('a code typed in lower case without the dash: sign in, come back, see the app, scopes and code, approve', async () => {
    const s = await start(authz)
    const typed = s.user_code.replace('-', '').toLowerCase()
    const address = newAddress()
    const first = await get(devicePath(typed), { address })
    expect(first.statusCode).toBe(303)
    // The sign-in page returns to the normalized code's page (with the request, for its name).
    expect(first.headers.location).toBe(
      `/account/sign-in?return_to=${encodeURIComponent(`/device?user_code=${s.user_code}&request=${await requestIdOf(authz, s.user_code)}`)}`,
    )
    const signInPage = await get(first.headers.location!)
    expect(signInPage.statusCode).toBe(200)
    expect(signInPage.body).toContain('<h1>Sign in</h1>')
    const cookie = await signInForDevice(authz, s.user_code)
    const shown = await get(devicePath(typed), { cookie, address })
    expect(shown.statusCode).toBe(200)
    expect(shown.headers).toMatchObject(PAGE_HEADERS)
    expect(h1(shown.body)).toBe('Connect Living Room &lt;TV&gt; on your device?')
    expect(shown.body).toContain(`<p class="code" id="binding-message">${s.user_code}</p>`)
    expect(shown.body).toContain('It must match the code shown where the request was made. If it does not, deny.')
    expect([...shown.body.matchAll(/data-scope="([^"]+)"/g)].map((m) => m[1])).toEqual([
      'openid',
      'profile',
      'orders.read',
      'offline_access',
    ])
    expect(shown.body).toContain(`action="/device?user_code=${s.user_code}"`)
    const done = await decideWith(authz, s.user_code, 'approve', cookie, address)
    expect(done.statusCode).toBe(200)
    expect(h1(done.body)).toBe('Device connected')
    expect(done.body).toContain('You approved Living Room &lt;TV&gt;. Go back to your device')
    const { rows } = await authz.db.query(
      'SELECT status, subject_id, approved_scopes, amr FROM device_authorizations WHERE id IN (SELECT id FROM device_authorizations WHERE decided_at IS NOT NULL ORDER BY decided_at DESC LIMIT 1)',
    )
    expect(rows).toEqual([
      { status: 'approved', subject_id: 'u-alice', approved_scopes: ['openid', 'profile', 'orders.read', 'offline_access'], amr: ['pwd'] },
    ])
    // Decided: the page now says the code was used.
    const again = await get(devicePath(s.user_code), { cookie, address })
    expect({ status: again.statusCode, h1: h1(again.body) }).toEqual({ status: 410, h1: 'This code was already used' })
  })

  it('deny: the page says so and the request is denied', async () => {
    const s = await start(authz)
    const cookie = await signInForDevice(authz, s.user_code)
    const done = await decideWith(authz, s.user_code, 'deny', cookie)
    expect({ status: done.statusCode, h1: h1(done.body) }).toEqual({ status: 200, h1: 'Denied' })
    expect(done.body).toContain('The device gets no access.')
  })

  it('a form with neither Approve nor Deny shows the screen again with a 400 and changes nothing', async () => {
    const s = await start(authz)
    const cookie = await signInForDevice(authz, s.user_code)
    const res = await decideWith(authz, s.user_code, 'maybe', cookie)
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('Choose Approve or Deny.')
    const { rows } = await authz.db.query(
      `SELECT count(*)::int AS n FROM device_authorizations WHERE status = 'pending' AND decided_at IS NOT NULL`,
    )
    expect(rows).toEqual([{ n: 0 }])
  })

  it('a form without the CSRF token, or from another site: 403 page, nothing changed', async () => {
    const s = await start(authz)
    const cookie = await signInForDevice(authz, s.user_code)
    const shown = await get(devicePath(s.user_code), { cookie })
    const jar = withCookies(cookie, shown.headers['set-cookie'])
    const noToken = await authz.app.inject({
      method: 'POST',
      url: devicePath(s.user_code),
      headers: { ...FORM, cookie: jar },
      payload: form({ decision: 'approve' }),
    })
    expect({ status: noToken.statusCode, h1: h1(noToken.body) }).toEqual({ status: 403, h1: 'Form not accepted' })
    const crossSite = await authz.app.inject({
      method: 'POST',
      url: devicePath(s.user_code),
      headers: { ...FORM, cookie: jar, origin: 'https://evil.example' },
      payload: form({ csrf: csrfIn(shown.body), decision: 'approve' }),
    })
    expect({ status: crossSite.statusCode, h1: h1(crossSite.body) }).toEqual({ status: 403, h1: 'Form not accepted' })
    expect((await get(devicePath(s.user_code), { cookie })).statusCode).toBe(200) // still pending
  })

  it('a decision posted without a session: 401 page with a way to sign in, nothing changed', async () => {
    const s = await start(authz)
    const cookie = await signInForDevice(authz, s.user_code)
    const shown = await get(devicePath(s.user_code), { cookie })
    const jar = withCookies(cookie, shown.headers['set-cookie'])
    const csrfOnly = jar
      .split('; ')
      .filter((c) => !c.startsWith('authz-session=') && !c.startsWith('__Host-authz-session='))
      .join('; ')
    const res = await authz.app.inject({
      method: 'POST',
      url: devicePath(s.user_code),
      headers: { ...FORM, cookie: csrfOnly },
      payload: form({ csrf: csrfIn(shown.body), decision: 'approve' }),
    })
    expect({ status: res.statusCode, h1: h1(res.body) }).toEqual({ status: 401, h1: 'Your session has ended' })
    expect(res.body).toContain(
      `href="/account/sign-in?return_to=${encodeURIComponent(`/device?user_code=${s.user_code}&request=${await requestIdOf(authz, s.user_code)}`)}"`,
    )
  })

  it('an unknown or malformed code: 404 with the form again; an expired one: 410', async () => {
    const address = newAddress()
    const unknown = await get(devicePath('BBBB-BBBB'), { address })
    expect({ status: unknown.statusCode, h1: h1(unknown.body) }).toEqual({ status: 404, h1: 'Connect a device' })
    expect(unknown.body).toContain('That code is not valid')
    expect(unknown.body).toContain('<form method="get" action="/device">')
    const malformed = await get(devicePath('AEIOU-12'), { address })
    expect(malformed.statusCode).toBe(404)
    const empty = await get(devicePath(''), { address })
    expect(empty.statusCode).toBe(200) // nothing typed: just the form
    const s = await start(authz, { ...TV, scope: 'openid' })
    authz.clock.advance(300)
    const expired = await get(devicePath(s.user_code), { address })
    expect({ status: expired.statusCode, h1: h1(expired.body) }).toEqual({ status: 410, h1: 'This code has expired' })
  })

  it('wrong codes are throttled per address: at the limit even a right code gets the blocked page; other addresses are unaffected', async () => {
    const s = await start(authz)
    const address = newAddress()
    for (let i = 0; i < 5; i++) expect((await get(devicePath(`BBBB-BBB${'CDFGH'[i]}`), { address })).statusCode).toBe(404)
    const blocked = await get(devicePath(s.user_code), { address })
    expect({ status: blocked.statusCode, h1: h1(blocked.body) }).toEqual({ status: 429, h1: 'Too many wrong codes' })
    expect(blocked.headers['retry-after']).toBe('300')
    expect((await get(devicePath(s.user_code), { address: newAddress() })).statusCode).toBe(303) // to sign-in
    const { rows } = await authz.db.query(`SELECT failures, blocks FROM failure_counters WHERE kind = 'device_user_code' AND name = $1`, [
      address,
    ])
    expect(rows).toEqual([{ failures: 0, blocks: 1 }])
    expect(authz.logs.some((l) => l.includes('"msg":"device user_code blocked"') && l.includes(address))).toBe(true)
    expect(authz.logs.join('\n')).not.toContain(s.user_code)
    // The block ends after USER_CODE_BLOCK_DURATION (300 s): the right code works again.
    authz.clock.advance(301)
    const s2 = await start(authz)
    expect((await get(devicePath(s2.user_code), { address })).statusCode).toBe(303)
  })

  it('a right code between wrong ones does not reset the count', async () => {
    const s = await start(authz)
    const address = newAddress()
    for (let i = 0; i < 4; i++) await get(devicePath(`BBBB-BBB${'CDFG'[i]}`), { address })
    expect((await get(devicePath(s.user_code), { address })).statusCode).toBe(303)
    expect((await get(devicePath('BBBB-BBBH'), { address })).statusCode).toBe(404)
    expect((await get(devicePath(s.user_code), { address })).statusCode).toBe(429)
  })
})
