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
import { backchannelLogoutWorker } from '../helpers/app.js'
import { freePort } from '../helpers/free-port.js'
import { ALICE, signInAs, startAuthz, type Authz } from './authz-server.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'

warnIfNoChromium('the express-openid-connect back-channel logout test')

// Its documentation asks for "any express-session compatible store"; its typings disagree with
// express-session's own, so the store is cast.
type BackchannelStore = NonNullable<Exclude<NonNullable<Parameters<typeof auth>[0]>['backchannelLogout'], boolean | undefined>['store']>

let authz: Authz
let issuer: string
let browser: Browser
let rp: Server
let rpBase: string

beforeAll(async () => {
  if (!haveChromium) return
  // The app's port is chosen before the seed, which names its back-channel URI; the app listens
  // on it only once our server, whose discovery it reads, is up.
  const rpPort = await freePort()
  rpBase = `http://localhost:${rpPort}` // another origin than the issuer's 127.0.0.1
  authz = await startAuthz({
    identityResources: ['openid', 'profile', 'email'],
    clients: [
      {
        clientId: 'shop',
        clientName: 'Acme Shop',
        secrets: [{ value: 'shop-secret' }],
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid', 'profile', 'email'],
        redirectUris: [`${rpBase}/callback`],
        backChannelLogoutUri: `${rpBase}/backchannel-logout`,
      },
    ],
    users: [ALICE],
  })
  issuer = authz.issuer

  const shop = express()
  shop.use(
    auth({
      issuerBaseURL: issuer,
      baseURL: rpBase,
      clientID: 'shop',
      clientSecret: 'shop-secret',
      secret: 'a long, randomly-generated string stored in env',
      authRequired: false,
      authorizationParams: { response_type: 'code' },
      backchannelLogout: { store: new session.MemoryStore() as unknown as BackchannelStore },
    }),
  )
  shop.get('/', (req, res) => {
    res.type('html').send(req.oidc.isAuthenticated() ? `<h1>Hello ${req.oidc.user?.name}</h1>` : '<h1>Signed out</h1>')
  })
  await new Promise<void>((r) => (rp = shop.listen(rpPort, '127.0.0.1', () => r())))
  expect((rp.address() as AddressInfo).port).toBe(rpPort)
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await authz?.close()
  await new Promise((r) => rp?.close(r))
})

describe.skipIf(!haveChromium)('express-openid-connect with backchannelLogout', () => {
  it('signing out at the server signs the person out of the app', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${rpBase}/login`)
    expect(new URL(page.url()).origin).toBe(issuer) // our sign-in page
    await signInAs(page, ALICE, `${rpBase}/`)
    expect(await page.locator('h1').textContent()).toBe('Hello Alice Example')

    // The person signs out at our server, not at the app: only the logout token can tell the app.
    await page.goto(`${issuer}/account/sign-out`)
    await Promise.all([page.waitForLoadState(), page.click('button[type=submit]')])
    expect(await page.locator('h1').textContent()).toContain('signed out')
    await backchannelLogoutWorker(authz.app).runOnce() // after any run the sign-out itself started
    const { rows } = await authz.db.query<{ client_id: string; status: string; http_status: number }>(
      'SELECT client_id, status, http_status FROM backchannel_logouts',
    )
    expect(rows).toEqual([{ client_id: 'shop', status: 'delivered', http_status: 204 }])

    await page.goto(`${rpBase}/`)
    expect(await page.locator('h1').textContent()).toBe('Signed out')
    await context.close()
  })
})
