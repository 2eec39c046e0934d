// Back-channel logout end to end (OpenID Connect Back-Channel Logout 1.0): an express-openid-connect
// app configured only as its documentation says (issuerBaseURL, baseURL, clientID, clientSecret,
// secret, authRequired false, backchannelLogout with an express-session store; response_type code,
// since we implement the code flow only), a person signed in to it through our real pages in
// headless Chromium, then signed out at our server: the app's next request shows them signed out,
// because our logout token reached its /backchannel-logout and passed its checks (signature against
// our JWKS, iss, aud, events, no nonce, sid).
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { auth } from 'express-openid-connect'
import session from 'express-session'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { systemClock } from '../../src/domain/clock.js'
import { createLogger } from '../../src/http/logger.js'
import { applySeed } from '../../src/seed/apply.js'
import { testConfig } from '../helpers/app.js'
import { createTestDb, type TestDb } from '../helpers/db.js'
import { freePort } from '../helpers/free-port.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'

warnIfNoChromium('the express-openid-connect back-channel logout test')

// Its documentation asks for "any express-session compatible store"; its typings disagree with
// express-session's own, so the store is cast.
type BackchannelStore = NonNullable<Exclude<NonNullable<Parameters<typeof auth>[0]>['backchannelLogout'], boolean | undefined>['store']>

let testDb: TestDb
let app: Awaited<ReturnType<typeof buildApp>>
let issuer: string
let browser: Browser
let rp: Server
let rpBase: string

beforeAll(async () => {
  if (!haveChromium) return
  const rpPort = await freePort()
  rpBase = `http://localhost:${rpPort}` // another origin than the issuer's 127.0.0.1
  const port = await freePort()
  issuer = `http://127.0.0.1:${port}`
  testDb = await createTestDb()
  app = await buildApp({ config: testConfig({ ISSUER: issuer }), db: testDb.db, clock: systemClock, logger: createLogger({ level: 'silent' }) })
  await applySeed(testDb.db, {
    identityResources: ['openid', 'profile', 'email'],
    clients: [{
      clientId: 'shop', clientName: 'Acme Shop', secrets: [{ value: 'shop-secret' }], allowedGrantTypes: ['authorization_code'],
      allowedScopes: ['openid', 'profile', 'email'], redirectUris: [`${rpBase}/callback`],
      backChannelLogoutUri: `${rpBase}/backchannel-logout`,
    }],
    users: [{ subjectId: 'alice-1', username: 'alice', password: 'alice-pw', claims: { name: 'Alice Example', email: 'alice@example.com' } }],
  })
  await app.listen({ port, host: '127.0.0.1' })

  const shop = express()
  shop.use(auth({
    issuerBaseURL: issuer,
    baseURL: rpBase,
    clientID: 'shop',
    clientSecret: 'shop-secret',
    secret: 'a long, randomly-generated string stored in env',
    authRequired: false,
    authorizationParams: { response_type: 'code' },
    backchannelLogout: { store: new session.MemoryStore() as unknown as BackchannelStore },
  }))
  shop.get('/', (req, res) => {
    res.type('html').send(req.oidc.isAuthenticated() ? `<h1>Hello ${req.oidc.user?.name}</h1>` : '<h1>Signed out</h1>')
  })
  await new Promise<void>((r) => (rp = shop.listen(rpPort, '127.0.0.1', () => r())))
  expect((rp.address() as AddressInfo).port).toBe(rpPort)
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await app?.close()
  await testDb?.close()
  await new Promise((r) => rp?.close(r))
})

describe.skipIf(!haveChromium)('express-openid-connect with backchannelLogout', () => {
  it('signing out at the server signs the person out of the app', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${rpBase}/login`)
    expect(new URL(page.url()).origin).toBe(issuer) // our sign-in page
    await page.fill('#username', 'alice')
    await page.fill('#password', 'alice-pw')
    await Promise.all([page.waitForURL(`${rpBase}/`), page.click('button[type=submit]')])
    expect(await page.locator('h1').textContent()).toBe('Hello Alice Example')

    // The person signs out at our server, not at the app: only the logout token can tell the app.
    await page.goto(`${issuer}/account/sign-out`)
    await Promise.all([page.waitForLoadState(), page.click('button[type=submit]')])
    expect(await page.locator('h1').textContent()).toContain('signed out')
    await app.authz.backchannelLogout.runOnce() // after any run the sign-out itself started
    const { rows } = await testDb.db.query<{ client_id: string; status: string; http_status: number }>('SELECT client_id, status, http_status FROM backchannel_logouts')
    expect(rows).toEqual([{ client_id: 'shop', status: 'delivered', http_status: 204 }])

    await page.goto(`${rpBase}/`)
    expect(await page.locator('h1').textContent()).toBe('Signed out')
    await context.close()
  })
})
