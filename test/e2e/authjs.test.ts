// Auth.js (@auth/express) as the relying party, configured only as its documentation configures a
// custom OIDC provider: { id, name, type: 'oidc', issuer, clientId, clientSecret }, a secret and
// trustHost. Headless Chromium is the person: Auth.js's own sign-in page, our sign-in page, back
// at the app, whose session names the user from the ID token's claims (Auth.js reads no userinfo
// for an OIDC provider). The app runs on another origin (localhost vs 127.0.0.1) and port.
import { ExpressAuth, getSession, type ExpressAuthConfig } from '@auth/express'
import express from 'express'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALICE, signInAs, startAuthz, type Authz } from './authz-server.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'
import { startSite, type Site } from './site.js'

warnIfNoChromium('the Auth.js browser test')

let authz: Authz
let issuer: string
let site: Site
let appOrigin: string
let browser: Browser
let page: Page

beforeAll(async () => {
  if (!haveChromium) return
  site = await startSite() // the app is attached once the issuer it names is known
  appOrigin = site.origin
  // The client as the Auth.js docs ask a provider to register it: a confidential client whose
  // redirect URI is [origin]/auth/callback/[provider id]; Auth.js asks for 'openid profile email'.
  authz = await startAuthz({
    identityResources: ['openid', 'profile', 'email'],
    clients: [
      {
        clientId: 'authjs-app',
        clientName: 'Auth.js app',
        secrets: [{ value: 'authjs-secret' }],
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid', 'profile', 'email'],
        redirectUris: [`${appOrigin}/auth/callback/authz`],
      },
    ],
    users: [ALICE],
  })
  issuer = authz.issuer

  const authConfig: ExpressAuthConfig = {
    providers: [{ id: 'authz', name: 'authz', type: 'oidc', issuer, clientId: 'authjs-app', clientSecret: 'authjs-secret' }],
    secret: 'a-test-secret-of-at-least-32-characters',
    trustHost: true,
  }
  const app = express()
  // Express 5 no longer accepts the bare '*' of the docs' "/auth/*"; "/auth" mounts the same routes.
  app.use('/auth', ExpressAuth(authConfig))
  app.get('/', async (req, res) => {
    res.json({ session: await getSession(req, authConfig) })
  })
  site.server.on('request', app)
  browser = await launchChromium()
  page = await browser.newPage()
})
afterAll(async () => {
  await browser?.close()
  await site?.close()
  await authz?.close()
})

describe.skipIf(!haveChromium)('Auth.js against authz', () => {
  it('signs in through our sign-in page; the app session names the user', async () => {
    await page.goto(`${appOrigin}/auth/signin`)
    await Promise.all([page.waitForURL((u) => u.origin === issuer), page.click('button:has-text("Sign in with authz")')])
    expect(new URL(page.url()).pathname).toBe('/account/sign-in')
    expect(await page.locator('#client-name').textContent()).toBe('Auth.js app')
    await signInAs(page, ALICE, (u) => u.origin === appOrigin && !u.pathname.startsWith('/auth/'))

    const session = await page.evaluate(async () => (await fetch('/auth/session')).json())
    expect(session).toEqual({ user: { name: 'Alice Example', email: 'alice@example.com' }, expires: expect.any(String) })
    await page.goto(`${appOrigin}/`)
    expect(JSON.parse((await page.locator('body').textContent()) ?? '')).toMatchObject({
      session: { user: { name: 'Alice Example', email: 'alice@example.com' } },
    })
  })
})
