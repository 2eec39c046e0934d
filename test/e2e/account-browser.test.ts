// The account page in headless Chromium, as a person uses it: signed in to an app through the
// code flow (consent remembered) and on a second device, they find the app and both sessions on
// their account page, remove the app's access (its access token introspects inactive), change
// their password (the other device is signed out) and sign in again with the new one. With
// SCREENSHOT_DIR set, the pages are saved at desktop (1280 px) and phone (390 px) widths.
import { createHash, randomBytes } from 'node:crypto'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALICE, approveConsent, signInAs, startAuthz, type Authz } from './authz-server.js'
import { haveChromium, launchChromium, warnIfNoChromium, saveScreenshots } from './browser.js'
import { startSite, type Site } from './site.js'

warnIfNoChromium('the account page browser test')

const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'

let authz: Authz
let browser: Browser
let rp: Site

beforeAll(async () => {
  if (!haveChromium) return
  rp = await startSite((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end('<!doctype html><title>Client</title><h1>Client</h1>')
  })
  authz = await startAuthz({
    apiScopes: [{ name: 'orders.read', displayName: 'Read your orders' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read'], secrets: [{ value: 'orders-secret' }] }],
    identityResources: ['openid', 'profile', 'email', 'offline_access'],
    clients: [
      {
        clientId: 'shop',
        clientName: 'Acme Shop',
        secrets: [{ value: 'shop-secret' }],
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid', 'profile', 'email', 'orders.read', 'offline_access'],
        allowOfflineAccess: true,
        requireConsent: true,
        redirectUris: [`${rp.origin}/cb`],
      },
    ],
    users: [ALICE],
  })
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await authz?.close()
  await rp?.close()
})

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`

async function post(path: string, params: Record<string, string>, auth: string) {
  const res = await fetch(`${authz.issuer}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
    body: new URLSearchParams(params),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

/** Saves the page at both widths, the whole page (SCREENSHOT_DIR). */
const shot = (page: Page, name: string) => saveScreenshots(page, name)

const h1 = (page: Page) => page.locator('h1').textContent()

describe.skipIf(!haveChromium)('the account page in Chromium', () => {
  let laptop: BrowserContext
  let phone: BrowserContext
  afterAll(async () => {
    await laptop?.close()
    await phone?.close()
  })

  it('shows the app and the sessions, removes the app, changes the password', async () => {
    // An app signed in to with consent remembered, and its tokens.
    laptop = await browser.newContext()
    const page = await laptop.newPage()
    const verifier = randomBytes(32).toString('base64url')
    const authorize = new URL(`${authz.issuer}/connect/authorize`)
    authorize.search = new URLSearchParams({
      client_id: 'shop',
      redirect_uri: `${rp.origin}/cb`,
      response_type: 'code',
      scope: 'openid profile orders.read offline_access',
      state: 'st',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString()
    await page.goto(authorize.href)
    await signInAs(page, ALICE, (u) => !u.pathname.startsWith('/account/sign-in'))
    await page.getByLabel('Remember this decision for Acme Shop').check()
    await approveConsent(page, `${rp.origin}/cb?**`)
    const code = new URL(page.url()).searchParams.get('code')!
    const tokens = await post(
      '/connect/token',
      { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: `${rp.origin}/cb` },
      basic('shop', 'shop-secret'),
    )
    expect(tokens.status).toBe(200)
    const accessToken = String(tokens.body.access_token)

    // A second device.
    phone = await browser.newContext({ userAgent: IPHONE })
    const other = await phone.newPage()
    await other.goto(`${authz.issuer}/account`)
    await signInAs(other, ALICE, `${authz.issuer}/account`)

    await page.goto(`${authz.issuer}/account`)
    expect(await h1(page)).toBe('Your account')
    const app = page.locator('#apps .item')
    expect(await app.locator('.item-title').allTextContents()).toEqual(['Acme Shop'])
    expect(await app.locator('.item-text').textContent()).toBe('Sign you in · Your profile · Read your orders · Stay signed in')
    const sessions = page.locator('#sessions .item-title')
    expect((await sessions.allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim())).toEqual([
      'Chrome on Linux This device',
      'Safari on iOS',
    ])
    await shot(page, 'account')

    // Remove the app: its access token stops working at once.
    await page.getByRole('button', { name: 'Remove access for Acme Shop' }).click()
    await page.locator('[role=status]').waitFor()
    expect(await page.locator('[role=status]').textContent()).toBe(
      'Acme Shop no longer has access to your account. It has been signed out.',
    )
    expect(await page.locator('#apps .empty').textContent()).toBe('No app has access to your account.')
    expect(await post('/connect/introspect', { token: accessToken }, basic('orders-api', 'orders-secret'))).toEqual({
      status: 200,
      body: { active: false },
    })
    await shot(page, 'account-app-removed')

    // Change the password: the phone is signed out, this browser stays signed in.
    await page.getByRole('link', { name: 'Change password' }).click()
    expect(await h1(page)).toBe('Change your password')
    await page.getByLabel('Current password').fill('wrong password')
    await page.getByLabel('New password', { exact: true }).fill('correct horse battery')
    await page.getByLabel('New password again').fill('correct horse battery')
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.locator('[role=alert]').waitFor()
    expect(await page.locator('[role=alert]').textContent()).toBe(
      'The current password is incorrect, or your account cannot change it right now. Check it and try again.',
    )
    await shot(page, 'password-refused')
    await page.getByLabel('Current password').fill(ALICE.password)
    await page.getByLabel('New password', { exact: true }).fill('correct horse battery')
    await page.getByLabel('New password again').fill('correct horse battery')
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.locator('h1', { hasText: 'Password changed' }).waitFor()
    expect(await page.locator('[role=status]').innerText()).toBe(
      'Your password has been changed. Use it the next time you sign in.\n\nOne other session has been signed out.',
    )
    await shot(page, 'password-changed')
    await other.goto(`${authz.issuer}/account`)
    expect(new URL(other.url()).pathname).toBe('/account/sign-in')
    await page.getByRole('link', { name: 'Back to your account' }).click()
    await page.locator('#sessions').waitFor()
    expect(await page.locator('#sessions .item').count()).toBe(1)

    // The new password signs in; the old one no longer does.
    await page.getByRole('button', { name: 'Sign out' }).last().click()
    await page.locator('h1', { hasText: 'You are signed out' }).waitFor()
    await page.goto(`${authz.issuer}/account`)
    await page.fill('#username', ALICE.username)
    await page.fill('#password', ALICE.password)
    await page.click('button[type=submit]')
    await page.locator('[role=alert]').waitFor()
    await signInAs(page, { username: ALICE.username, password: 'correct horse battery' }, `${authz.issuer}/account`)
    expect(await h1(page)).toBe('Your account')
  })
})
