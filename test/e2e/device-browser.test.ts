// The device flow end to end (RFC 8628) against a listening server: openid-client (v6) starts it
// and polls the token endpoint the way a device does, while headless Chromium is the person:
// once following verification_uri_complete, signing in on the shared page and approving (the
// library gets tokens and validates the ID token), once typing the code in lower case without the
// dash at /device and denying (the library gets access_denied). The server runs on the system
// clock here: the library waits the interval (1 s for this client) between polls in real time.
// With SCREENSHOT_DIR set, every device page is saved there as a PNG.
import { join } from 'node:path'
import * as client from 'openid-client'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { systemClock } from '../../src/domain/clock.js'
import { createLogger } from '../../src/http/logger.js'
import { applySeed } from '../../src/seed/apply.js'
import { deviceSeed } from '../device/harness.js'
import { testConfig } from '../helpers/app.js'
import { createTestDb, type TestDb } from '../helpers/db.js'
import { freePort } from '../helpers/free-port.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'

warnIfNoChromium('the device flow browser test')

let testDb: TestDb
let app: Awaited<ReturnType<typeof buildApp>>
let issuer: URL
let browser: Browser

beforeAll(async () => {
  if (!haveChromium) return
  testDb = await createTestDb()
  const port = await freePort()
  const config = testConfig({ ISSUER: `http://127.0.0.1:${port}` })
  app = await buildApp({ config, db: testDb.db, clock: systemClock, logger: createLogger({ level: 'silent' }) })
  await applySeed(testDb.db, {
    ...deviceSeed,
    clients: deviceSeed.clients.map((c) => (c.clientId === 'tv' ? { ...c, pollingInterval: 1 } : c)),
  })
  await app.listen({ port, host: '127.0.0.1' })
  issuer = new URL(config.issuer)
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await app?.close()
  await testDb?.close()
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
  page.on('console', (m) => void (m.type() === 'error' && !m.text().startsWith('Failed to load resource: the server responded with a status of 4') && consoleErrors.push(m.text())))
  return { page, consoleErrors }
}

async function signIn(page: Page) {
  expect(await page.locator('h1').textContent()).toBe('Sign in')
  await page.getByLabel('Username').fill('alice')
  await page.getByLabel('Password').fill('alice-pw')
  await page.getByRole('button', { name: 'Sign in' }).click()
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
    await page.goto(started.verification_uri_complete!) // no session: the shared sign-in page
    await shot(page, 'sign-in')
    await signIn(page)
    await page.waitForURL(`${issuer.origin}/device?user_code=${started.user_code}`)
    expect(await page.locator('h1').textContent()).toBe('Connect Living Room <TV> on your device?')
    expect(await page.locator('#binding-message').textContent()).toBe(started.user_code)
    expect(await page.locator('#signed-in-as').textContent()).toBe('alice')
    expect(await page.locator('#scopes li strong').allTextContents()).toEqual(['Your user identifier', 'Your name', 'Read your orders', 'Stay signed in'])
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
    const outcome = polling.then(() => 'tokens', (e: unknown) => e)

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
    await signIn(page)
    await page.waitForURL(`${issuer.origin}/device?user_code=${started.user_code}`)
    await page.getByRole('button', { name: 'Deny' }).click()
    await page.waitForLoadState()
    expect(await page.locator('h1').textContent()).toBe('Denied')
    await shot(page, 'denied')

    expect(await outcome).toMatchObject({ name: 'ResponseBodyError', status: 400, error: 'access_denied', error_description: 'the user denied the request' })
    expect(consoleErrors).toEqual([])
  })
})
