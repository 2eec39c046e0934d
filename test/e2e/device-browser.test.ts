// The device flow end to end (RFC 8628) against a listening server: openid-client (v6) starts it
// and polls the token endpoint the way a device does, while headless Chromium is the person:
// once following verification_uri_complete, signing in on the shared page and approving (the
// library gets tokens and validates the ID token), once typing the code in lower case without the
// dash at /device and denying (the library gets access_denied). The server runs on the system
// clock here: the library waits the interval (1 s for this client) between polls in real time.
// A third test is the attack on the wrong-code block: a page on another site makes the person's
// browser post and send wrong codes to /device, and the person's own code still works afterwards.
// With SCREENSHOT_DIR set, every device page is saved there as a PNG.
import { join } from 'node:path'
import * as client from 'openid-client'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deviceSeed } from '../flows/device/harness.js'
import { signInAs, startAuthz, type Authz } from './authz-server.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'
import { startSite, type Site } from './site.js'

warnIfNoChromium('the device flow browser test')

let authz: Authz
let issuer: URL
let browser: Browser
/** Another site (localhost is not 127.0.0.1's site): serves `attackPage`. */
let evil: Site
let evilOrigin: string
let attackPage = ''

beforeAll(async () => {
  if (!haveChromium) return
  evil = await startSite((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(attackPage))
  evilOrigin = evil.origin
  authz = await startAuthz({
    ...deviceSeed,
    clients: deviceSeed.clients.map((c) => (c.clientId === 'tv' ? { ...c, pollingInterval: 1 } : c)),
  })
  issuer = new URL(authz.issuer)
  browser = await launchChromium()
})
afterAll(async () => {
  await evil?.close()
  await browser?.close()
  await authz?.close()
})

async function tv(): Promise<client.Configuration> {
  const config = await client.discovery(issuer, 'tv', undefined, client.None(), { execute: [client.allowInsecureRequests] })
  client.enableNonRepudiationChecks(config)
  return config
}

async function shot(page: Page, name: string) {
  if (process.env.SCREENSHOT_DIR) await page.screenshot({ path: join(process.env.SCREENSHOT_DIR, `device-${name}.png`), fullPage: true })
}

async function newPage(): Promise<{ page: Page; consoleErrors: string[] }> {
  const page = await (await browser.newContext()).newPage()
  const consoleErrors: string[] = [] // a CSP violation shows up here (the 404 and 410 pages' own status too: not counted)
  page.on(
    'console',
    (m) =>
      void (
        m.type() === 'error' &&
        !m.text().startsWith('Failed to load resource: the server responded with a status of 4') &&
        consoleErrors.push(m.text())
      ),
  )
  return { page, consoleErrors }
}

/** The device page of `userCode`, back from the sign-in page (its URL also names the request). */
const devicePageOf = (userCode: string) => (u: URL) =>
  u.origin === issuer.origin && u.pathname === '/device' && u.searchParams.get('user_code') === userCode

/** On the shared sign-in page: signs in as the seed's alice and waits for the device page of `userCode`. */
async function signIn(page: Page, userCode: string) {
  expect(await page.locator('h1').textContent()).toBe('Sign in')
  await signInAs(page, { username: 'alice', password: 'alice-pw' }, devicePageOf(userCode))
}

describe.skipIf(!haveChromium)('device flow with openid-client and a browser', () => {
  it('openid-client polls while the person approves at verification_uri_complete: tokens, a validated ID token', async () => {
    const config = await tv()
    expect(config.serverMetadata().device_authorization_endpoint).toBe(`${issuer.origin}/connect/deviceauthorization`)
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid profile orders.read offline_access' })
    expect(started).toMatchObject({ interval: 1, expires_in: 300, verification_uri: `${issuer.origin}/device` })
    expect(started.verification_uri_complete).toBe(`${issuer.origin}/device?user_code=${started.user_code}`)
    const polling = client.pollDeviceAuthorizationGrant(config, started)

    const { page, consoleErrors } = await newPage()
    await page.goto(started.verification_uri_complete!) // no session: the shared sign-in page, naming the application
    expect(await page.locator('#client-name').textContent()).toBe('Living Room <TV>')
    await shot(page, 'sign-in')
    await page.setViewportSize({ width: 390, height: 844 }) // a phone, where people type these codes
    await shot(page, 'sign-in-phone')
    await page.setViewportSize({ width: 1280, height: 720 })
    await signIn(page, started.user_code)
    expect(await page.locator('h1').textContent()).toBe('Connect Living Room <TV> on your device?')
    expect(await page.locator('#binding-message').textContent()).toBe(started.user_code)
    expect(await page.locator('#signed-in-as').textContent()).toBe('alice')
    expect(await page.locator('#scopes li strong').allTextContents()).toEqual([
      'Your user identifier',
      'Your name',
      'Read your orders',
      'Stay signed in',
    ])
    await shot(page, 'decision')
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.waitForLoadState()
    expect(await page.locator('h1').textContent()).toBe('Device connected')
    await shot(page, 'approved')

    const tokens = await polling
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'openid profile orders.read offline_access' })
    expect(tokens.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(tokens.claims()).toMatchObject({ sub: 'u-alice', aud: 'tv', amr: ['pwd'], name: 'Alice Example' })

    // The code is spent: following the link again says so.
    await page.goto(started.verification_uri_complete!)
    expect(await page.locator('h1').textContent()).toBe('This code was already used')
    await shot(page, 'used')
    expect(consoleErrors).toEqual([])
  })

  it('the code typed in lower case without the dash at /device, then denied: openid-client gets access_denied', async () => {
    const config = await tv()
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid orders.read' })
    const polling = client.pollDeviceAuthorizationGrant(config, started)
    const outcome = polling.then(
      () => 'tokens',
      (e: unknown) => e,
    )

    const { page, consoleErrors } = await newPage()
    await page.goto(started.verification_uri)
    expect(await page.locator('h1').textContent()).toBe('Connect a device')
    await shot(page, 'enter')
    await page.getByLabel('Code').fill('bbbbbbbb') // a wrong code first
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.waitForLoadState()
    expect(await page.locator('[role=alert]').textContent()).toContain('That code is not valid')
    await shot(page, 'unknown')
    await page.getByLabel('Code').fill(started.user_code.replace('-', '').toLowerCase())
    await page.getByRole('button', { name: 'Continue' }).click()
    await signIn(page, started.user_code)
    await page.getByRole('button', { name: 'Deny' }).click()
    await page.waitForLoadState()
    expect(await page.locator('h1').textContent()).toBe('Denied')
    await shot(page, 'denied')

    expect(await outcome).toMatchObject({
      name: 'ResponseBodyError',
      status: 400,
      error: 'access_denied',
      error_description: 'the user denied the request',
    })
    expect(consoleErrors).toEqual([])
  })

  it('another site makes the browser post and send wrong codes to /device: the person still gets through with their own code', async () => {
    const config = await tv()
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid' })
    const wrong = Array.from({ length: 8 }, (_, i) => `BBBB-BBB${'CDFGHJKL'[i]}`)
    const target = (code: string) => `${issuer.origin}/device?user_code=${code}`
    // Auto-submitted POST forms (into hidden frames), auto-submitted GET forms and images: 24
    // requests with wrong codes, each from the person's browser and address.
    attackPage = `<!doctype html><title>Win a prize</title>
${wrong
  .map(
    (
      c,
      i,
    ) => `<iframe name="p${i}" hidden></iframe><form method="post" action="${target(c)}" target="p${i}"><input name="decision" value="approve"></form>
<iframe name="g${i}" hidden></iframe><form method="get" action="${issuer.origin}/device" target="g${i}"><input name="user_code" value="${c}"></form>
<img src="${target(c)}" alt="">`,
  )
  .join('\n')}
<a id="link" href="${started.verification_uri_complete}">Connect your TV</a>
<script>for (const f of document.forms) f.submit()</script>`
    const { page, consoleErrors } = await newPage()
    const sent: string[] = []
    const answered = new Promise<void>((resolve) => {
      const seen = (r: { url(): string; method(): string }) => {
        if (r.url().startsWith(`${issuer.origin}/device`)) sent.push(r.method())
        if (sent.length === 3 * wrong.length) resolve()
      }
      page.on('requestfinished', seen)
      page.on('requestfailed', seen)
    })
    const counter = async () => (await authz.db.query(`SELECT failures, blocks FROM failure_counters WHERE kind = 'device_user_code'`)).rows
    const before = await counter() // the wrong code the previous test typed here itself
    await page.goto(evilOrigin)
    await answered
    expect(sent.filter((m) => m === 'POST')).toHaveLength(wrong.length)
    expect(await counter()).toEqual(before)

    // The person, at the same address in the same browser, follows that site's link with the
    // right code: the device page asks them to check the code (it came from another site), and
    // Continue leads to the sign-in page, which names the application.
    await page.locator('#link').click()
    await page.waitForURL(started.verification_uri_complete!)
    expect(await page.locator('h1').textContent()).toBe('Connect a device')
    expect(await page.locator('.lead').textContent()).toBe('Check that this is the code your device shows, then press Continue.')
    expect(await page.getByLabel('Code').inputValue()).toBe(started.user_code)
    await shot(page, 'confirm')
    await page.setViewportSize({ width: 390, height: 844 })
    await shot(page, 'confirm-phone')
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.waitForURL(/\/account\/sign-in\?/)
    expect(await page.locator('h1').textContent()).toBe('Sign in')
    expect(await page.locator('#client-name').textContent()).toBe('Living Room <TV>')
    // The attack's frames refused by frame-ancestors are reported whenever they are; nothing else may be.
    expect(consoleErrors.filter((m) => !m.startsWith('Framing '))).toEqual([])
  })
})
