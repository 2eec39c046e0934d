// CIBA end to end through a real listening server: start → authorization_pending → slow_down
// (and the grown interval) → the user approves on the page in headless Chromium → tokens,
// verified with jose against the JWKS endpoint. Protocol time moves on the injected clock.
import { createRemoteJWKSet, jwtVerify } from 'jose'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BANK, CIBA, createCibaTestApp, type CibaTestApp } from '../flows/ciba/harness.js'
import { signInAs } from './authz-server.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'

warnIfNoChromium('the CIBA browser test')

let authz: CibaTestApp
let browser: Browser
beforeAll(async () => {
  if (!haveChromium) return
  authz = await createCibaTestApp({ listen: true })
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await authz?.close()
})

async function post(path: string, params: Record<string, string>) {
  const res = await fetch(`${authz.baseUrl}${path}`, { method: 'POST', body: new URLSearchParams(params) })
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> }
}
const poll = (authReqId: string) => post('/connect/token', { ...BANK, grant_type: CIBA, auth_req_id: authReqId })

describe.skipIf(!haveChromium)('CIBA in a browser', () => {
  it('start, pending, slow_down, approve on the page, tokens', async () => {
    const started = await post('/connect/ciba', {
      ...BANK,
      scope: 'openid profile email offline_access',
      login_hint: 'alice@example.com',
      binding_message: 'TX-4711',
    })
    expect(started.status).toBe(200)
    expect(started.headers.get('cache-control')).toBe('no-store')
    const authReqId = started.body.auth_req_id as string
    expect(started.body).toMatchObject({ expires_in: 120, interval: 5 })

    expect(await poll(authReqId)).toMatchObject({ status: 400, body: { error: 'authorization_pending' } })
    expect(await poll(authReqId)).toMatchObject({
      status: 400,
      body: { error: 'slow_down', error_description: 'poll at most every 10 seconds' },
    })
    const { rows } = await authz.db.query('SELECT interval_seconds FROM ciba_requests')
    expect(rows).toEqual([{ interval_seconds: 10 }])

    const page = await browser.newPage()
    const consoleErrors: string[] = [] // a CSP violation (e.g. the style block) shows up here
    page.on('console', (m) => void (m.type() === 'error' && consoleErrors.push(m.text())))
    const approvalUrl = authz.notifications.at(-1)!.approval_url
    expect(approvalUrl.startsWith(`${authz.baseUrl}/ciba/approve?request=`)).toBe(true)
    await page.goto(approvalUrl) // no session yet: the shared sign-in page, which names the client
    expect(page.url()).toBe(`${authz.baseUrl}/account/sign-in?return_to=${encodeURIComponent(approvalUrl.slice(authz.baseUrl.length))}`)
    expect(await page.locator('h1').textContent()).toBe('Sign in')
    expect(await page.locator('#client-name').textContent()).toBe('Bank <App>')
    await signInAs(page, { username: 'alice', password: 'alice-pw' }, approvalUrl)
    expect(await page.locator('h1').textContent()).toBe('Bank <App> asks for your approval')
    expect(await page.locator('#binding-message').textContent()).toBe('TX-4711')
    expect(await page.locator('#scopes li strong').allTextContents()).toEqual([
      'Your user identifier',
      'Your name',
      'Your e-mail address',
      'Stay signed in',
    ])
    expect(await page.locator('#scopes li').evaluateAll((li) => li.map((e) => e.getAttribute('data-scope')))).toEqual([
      'openid',
      'profile',
      'email',
      'offline_access',
    ])
    const cookies = await page.context().cookies()
    // http issuer: no __Host- prefix and no Secure (browsers refuse both over plain http).
    expect(cookies.find((c) => c.name === 'authz-session')).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/', secure: false })
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.waitForLoadState()
    expect(await page.locator('h1').textContent()).toBe('Approved')
    expect(consoleErrors).toEqual([])
    await page.close()

    authz.clock.advance(10)
    const tokens = await poll(authReqId)
    expect(tokens.status).toBe(200)
    expect(Object.keys(tokens.body).sort()).toEqual(['access_token', 'expires_in', 'id_token', 'refresh_token', 'scope', 'token_type'])
    expect(tokens.body.scope).toBe('openid profile email offline_access')
    const jwks = createRemoteJWKSet(new URL(`${authz.baseUrl}/.well-known/openid-configuration/jwks`))
    const verifyOpts = { issuer: authz.baseUrl, currentDate: new Date(authz.clock.now()) }
    const { payload: id } = await jwtVerify(tokens.body.id_token as string, jwks, { ...verifyOpts, audience: 'bank' })
    expect(id).toMatchObject({ sub: 'u-alice', aud: 'bank', name: 'Alice Example', email: 'alice@example.com', amr: ['pwd'] })
    expect(typeof id.auth_time).toBe('number')
    const { payload: at, protectedHeader } = await jwtVerify(tokens.body.access_token as string, jwks, verifyOpts)
    expect(protectedHeader.typ).toBe('at+jwt')
    expect(at).toMatchObject({ sub: 'u-alice', client_id: 'bank', scope: 'openid profile email offline_access' })
  })
})
