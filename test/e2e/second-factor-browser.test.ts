// One-time codes (RFC 6238) in headless Chromium, as a person uses them: set up from the account
// page with a code this test computes (otplib) from the secret the page shows, the ten recovery
// codes read off the page; signed out, then password and code through the authorization code flow
// (the ID token says acr "mfa", amr pwd, otp, mfa); the same code refused a second time; a recovery
// code accepted once; and a requireMfa client leading a person without a second factor to set one
// up before going on. The pages as assistive technology reads them: a refusal tied to its field
// (aria-describedby names the alert, aria-invalid), the key named by its term; and the key fits a
// 360 px screen. With SCREENSHOT_DIR set, the pages are saved at desktop and phone widths.
import { createHash, randomBytes } from 'node:crypto'
import { decodeJwt } from 'jose'
import { generate } from 'otplib'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signInAs, startAuthz, type Authz } from './authz-server.js'
import { haveChromium, launchChromium, warnIfNoChromium, saveScreenshots } from './browser.js'
import { startSite, type Site } from './site.js'

warnIfNoChromium('the second factor browser test')

const ALICE = { subjectId: 'alice-1', username: 'alice', password: 'alice-pw', claims: {} }
const BOB = { subjectId: 'bob-1', username: 'bob', password: 'bob-pw', claims: {} }

let authz: Authz
let browser: Browser
let rp: Site
const contexts: BrowserContext[] = []

beforeAll(async () => {
  if (!haveChromium) return
  rp = await startSite((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end('<!doctype html><title>Client</title><h1>Client</h1>')
  })
  const client = (clientId: string, extra: Record<string, unknown> = {}) => ({
    clientId,
    clientName: clientId,
    secrets: [{ value: `${clientId}-secret` }],
    allowedGrantTypes: ['authorization_code'],
    allowedScopes: ['openid'],
    requireConsent: false,
    redirectUris: [`${rp.origin}/cb`],
    ...extra,
  })
  authz = await startAuthz({
    identityResources: ['openid'],
    clients: [client('shop'), client('strict', { requireMfa: true })],
    users: [ALICE, BOB],
  })
  browser = await launchChromium()
})
afterAll(async () => {
  for (const c of contexts) await c.close()
  await browser?.close()
  await authz?.close()
  await rp?.close()
})

/** Saves the page at both widths, the whole page (SCREENSHOT_DIR). */
const shot = (page: Page, name: string) => saveScreenshots(page, name, 360)

async function freshPage(): Promise<Page> {
  const context = await browser.newContext()
  contexts.push(context)
  return context.newPage()
}

const h1 = (page: Page) => page.locator('h1').textContent()
const atCallback = (u: URL) => u.origin === rp.origin && u.pathname === '/cb'

/** Opens the authorization endpoint for `clientId` (PKCE); `finish` turns the code into the ID token's claims. */
async function authorize(page: Page, clientId: string) {
  const verifier = randomBytes(32).toString('base64url')
  const url = new URL(`${authz.issuer}/connect/authorize`)
  url.search = new URLSearchParams({
    client_id: clientId,
    redirect_uri: `${rp.origin}/cb`,
    response_type: 'code',
    scope: 'openid',
    state: 'st',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString()
  await page.goto(url.href)
  return {
    async finish() {
      const code = new URL(page.url()).searchParams.get('code')
      expect(code, 'the callback carries a code').toBeTruthy()
      const res = await fetch(`${authz.issuer}/connect/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${clientId}:${clientId}-secret`).toString('base64')}`,
        },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: code!,
          code_verifier: verifier,
          redirect_uri: `${rp.origin}/cb`,
        }),
      })
      expect(res.status).toBe(200)
      return decodeJwt(String(((await res.json()) as Record<string, unknown>).id_token))
    },
  }
}

/** The code of `secret` now, or `steps` 30-second steps from now. */
const codeOf = (secret: string, steps = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 })

/** The field's refusal: announced (role=alert), the field marked invalid and described by the alert as well as its hint. */
async function expectRefusalTiedTo(page: Page, field: string, hint: string) {
  const alert = page.getByRole('alert').filter({ visible: true })
  const id = await alert.getAttribute('id')
  expect(id).toBeTruthy()
  const input = page.getByLabel(field, { exact: true })
  expect(await input.getAttribute('aria-invalid')).toBe('true')
  expect((await input.getAttribute('aria-describedby'))!.split(' ')).toEqual([hint, id])
  // What a screen reader says after the field's name: the hint, then the refusal.
  const description = await input.evaluate((el) =>
    el
      .getAttribute('aria-describedby')!
      .split(' ')
      .map((ref) => document.getElementById(ref)?.textContent?.trim())
      .join(' '),
  )
  expect(description).toBe(`${await page.locator(`#${hint}`).textContent()} ${await alert.textContent()}`)
}

/** At 360 px the page scrolls only down: nothing, the key least of all, is wider than the screen. */
async function expectFitsPhone(page: Page) {
  await page.setViewportSize({ width: 360, height: 800 })
  const widths = await page.evaluate(() => {
    const key = document.getElementById('totp-secret')!
    return {
      page: document.documentElement.scrollWidth,
      key: key.scrollWidth,
      keyBox: key.clientWidth,
      keyRight: key.getBoundingClientRect().right,
    }
  })
  expect(widths.page).toBeLessThanOrEqual(360)
  expect(widths.key).toBeLessThanOrEqual(widths.keyBox)
  expect(widths.keyRight).toBeLessThanOrEqual(360)
  // The key wraps between its groups of four, never inside one: each group sits on one line.
  const split = await page.evaluate(() => {
    const text = document.getElementById('totp-secret')!.firstChild!
    const groups = text.textContent!.split(' ')
    let at = 0
    return groups.filter((g) => {
      const range = document.createRange()
      range.setStart(text, at)
      range.setEnd(text, at + g.length)
      at += g.length + 1
      return new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top))).size !== 1
    })
  })
  expect(split).toEqual([])
  await page.setViewportSize({ width: 1280, height: 900 })
}

/** On the enrolment page: reads the secret, checks the QR code and link, turns codes on; returns the secret and the recovery codes. */
async function setUpCodes(page: Page, name: string) {
  await page.locator('h1', { hasText: 'Set up one-time codes' }).waitFor()
  const secret = (await page.locator('#totp-secret').textContent())!.replace(/\s/g, '')
  // The key is named: a term ("Key") and its definition (the key itself).
  expect(await page.getByRole('term').textContent()).toBe('Key')
  expect(await page.getByRole('definition').locator('#totp-secret').count()).toBe(1)
  expect((await page.getByRole('definition').textContent())!.replace(/\s/g, '')).toBe(secret)
  await expectFitsPhone(page)
  expect(secret).toMatch(/^[A-Z2-7]{32,}$/)
  expect(await page.locator('.qr[role=img] svg').count()).toBe(1)
  const link = await page.locator('#otpauth-link').getAttribute('href')
  expect(link).toMatch(/^otpauth:\/\/totp\//)
  expect(new URL(link!).searchParams.get('secret')).toBe(secret)
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('code')
  await shot(page, `${name}-enrol`)

  // A wrong code first: refused, announced, the field marked.
  await page.getByLabel('One-time code').fill('000000' === (await codeOf(secret)) ? '111111' : '000000')
  await page.getByRole('button', { name: 'Turn on' }).click()
  await page.locator('[role=alert]').waitFor()
  await expectRefusalTiedTo(page, 'One-time code', 'code-hint')
  await expectFitsPhone(page)
  await shot(page, `${name}-enrol-refused`)

  await page.getByLabel('One-time code').fill(await codeOf(secret))
  await page.getByRole('button', { name: 'Turn on' }).click()
  await page.locator('h1', { hasText: 'Your recovery codes' }).waitFor()
  const recovery = await page.locator('#recovery-codes li').allTextContents()
  expect(recovery).toHaveLength(10)
  expect(new Set(recovery).size).toBe(10)
  await shot(page, `${name}-recovery-codes`)
  return { secret, recovery }
}

describe.skipIf(!haveChromium)('one-time codes in Chromium', () => {
  it('sets up codes on the account page; then password and code give acr mfa; a code and a recovery code work once', async () => {
    const page = await freshPage()
    await page.goto(`${authz.issuer}/account`)
    await signInAs(page, ALICE, `${authz.issuer}/account`)
    await shot(page, 'two-step-account-off')
    const section = page.locator('#two-step')
    expect(await section.locator('h2').textContent()).toBe('Two-step verification')
    await section.getByRole('link', { name: 'Set up one-time codes' }).click()
    const { secret, recovery } = await setUpCodes(page, 'two-step')
    await page.getByRole('link', { name: 'Continue' }).click()
    expect(await h1(page)).toBe('Your account')
    expect(await section.locator('.hint').textContent()).toBe('One-time codes are on. Recovery codes left: 10.')
    await shot(page, 'two-step-account-on')
    await page.getByRole('button', { name: 'Sign out' }).last().click()
    await page.locator('h1', { hasText: 'You are signed out' }).waitFor()

    // Password, then the code (the next step's: the enrolment used this one).
    const signIn = await authorize(page, 'shop')
    await signInAs(page, ALICE, (u) => u.pathname === '/account/sign-in/code')
    expect(await h1(page)).toBe('Two-step verification')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('code')
    await shot(page, 'two-step-code')
    const code = await codeOf(secret, 1)
    await page.getByLabel('One-time code').fill(code)
    await Promise.all([page.waitForURL(atCallback), page.getByRole('button', { name: 'Verify' }).click()])
    expect(await signIn.finish()).toMatchObject({ sub: 'alice-1', acr: 'mfa', amr: ['pwd', 'otp', 'mfa'] })

    // Another browser: the same code again is refused, a recovery code goes through.
    const other = await freshPage()
    const again = await authorize(other, 'shop')
    await signInAs(other, ALICE, (u) => u.pathname === '/account/sign-in/code')
    await other.getByLabel('One-time code').fill(code)
    await other.getByRole('button', { name: 'Verify' }).click()
    await other.locator('[role=alert]').waitFor()
    expect(await other.locator('[role=alert]').textContent()).toBe(
      'That code did not work, or this account cannot sign in right now. Check the code and try again.',
    )
    await expectRefusalTiedTo(other, 'One-time code', 'code-hint')
    await shot(other, 'two-step-code-refused')
    await other.getByText('Use a recovery code instead').click()
    await other.getByLabel('Recovery code').fill(recovery[0]!)
    await Promise.all([other.waitForURL(atCallback), other.locator('#recovery-code ~ .actions button').click()])
    expect(await again.finish()).toMatchObject({ sub: 'alice-1', acr: 'mfa' })

    // The recovery code a second time: refused.
    const third = await freshPage()
    await authorize(third, 'shop')
    await signInAs(third, ALICE, (u) => u.pathname === '/account/sign-in/code')
    await third.getByText('Use a recovery code instead').click()
    await third.getByLabel('Recovery code').fill(recovery[0]!)
    await third.locator('#recovery-code ~ .actions button').click()
    await third.locator('[role=alert]').waitFor()
    expect(await third.locator('[role=alert]').textContent()).toBe(
      'That recovery code did not work, or this account cannot sign in right now. Check it and try again.',
    )
    await expectRefusalTiedTo(third, 'Recovery code', 'recovery-code-hint')
    expect(await third.evaluate(() => document.activeElement?.id)).toBe('recovery-code')
    await shot(third, 'two-step-recovery-refused')
    expect(new URL(third.url()).pathname).toBe('/account/sign-in/code')
  })

  it('leads a person without a second factor to set one up for a requireMfa client, then on to the client', async () => {
    const page = await freshPage()
    const signIn = await authorize(page, 'strict')
    await signInAs(page, BOB, (u) => u.pathname === '/account/two-step')
    expect(await page.locator('.notice').textContent()).toBe('Signing in here needs a second step. Set up one-time codes to continue.')
    expect(await page.getByRole('link', { name: 'Cancel' }).count()).toBe(0)
    await setUpCodes(page, 'two-step-required')
    await Promise.all([page.waitForURL(atCallback), page.getByRole('link', { name: 'Continue' }).click()])
    expect(await signIn.finish()).toMatchObject({ sub: 'bob-1', acr: 'mfa', amr: ['pwd', 'otp', 'mfa'] })
  })
})
