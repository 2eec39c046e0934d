// express-openid-connect (Auth0's Express middleware, on openid-client v6) as a relying party,
// configured with only what its own README and ConfigParams ask for: issuerBaseURL, baseURL,
// clientID, clientSecret, secret, and response_type code for the code flow with a secret. Headless
// Chromium signs in through our real sign-in and consent pages; the app then reads the ID token
// (req.oidc.user) and our userinfo (req.oidc.fetchUserInfo), and its /logout goes through our
// end-session endpoint (RP-Initiated Logout 1.0) back to the app's baseURL.
import express from 'express'
import { auth, requiresAuth } from 'express-openid-connect'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALICE, approveConsent, signInAs, startAuthz, type Authz } from './authz-server.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'
import { startSite, type Site } from './site.js'

warnIfNoChromium('the express-openid-connect browser test')

let authz: Authz
let issuer: string
let rp: Site
/**
 * The app and authz both on localhost, as in local development (app on :3000, authz on :5000):
 * cookies are per host, not per port, so the library's cookies reach authz and ours reach the app.
 */
let baseURL: string
let browser: Browser

/** The app, exactly as the library's README sets it up, plus two routes that show what it sees. */
function rpApp(): express.Express {
  const app = express()
  app.use(
    auth({
      issuerBaseURL: issuer,
      baseURL,
      clientID: 'shop',
      clientSecret: 'shop-secret',
      secret: 'a long random string that encrypts the session cookie',
      authRequired: false,
      idpLogout: true,
      authorizationParams: { response_type: 'code', scope: 'openid profile email' },
    }),
  )
  app.get('/', (req, res) => {
    res.type('text/plain').send(req.oidc.isAuthenticated() ? `signed in as ${req.oidc.user?.name}` : 'signed out')
  })
  app.get('/profile', requiresAuth(), async (req, res) => {
    res.type('text/plain').send(JSON.stringify({ user: req.oidc.user, userinfo: await req.oidc.fetchUserInfo() }))
  })
  return app
}

beforeAll(async () => {
  if (!haveChromium) return
  rp = await startSite() // the app is attached once the issuer it names is known
  baseURL = rp.origin
  // The issuer on localhost too (see baseURL).
  authz = await startAuthz(
    {
      identityResources: ['openid', 'profile', 'email'],
      clients: [
        {
          clientId: 'shop',
          clientName: 'Acme Shop',
          secrets: [{ value: 'shop-secret' }],
          allowedGrantTypes: ['authorization_code'],
          allowedScopes: ['openid', 'profile', 'email'],
          requireConsent: true,
          redirectUris: [`${baseURL}/callback`],
          postLogoutRedirectUris: [baseURL],
        },
      ],
      users: [{ ...ALICE, claims: { ...ALICE.claims, email_verified: true } }],
    },
    { issuerHost: 'localhost' },
  )
  issuer = authz.issuer
  rp.server.on('request', rpApp())
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await authz?.close()
  await rp?.close()
})

const body = async (page: Page) => (await page.locator('body').innerText()).trim()

describe.skipIf(!haveChromium)('express-openid-connect against authz in Chromium', () => {
  let page: Page
  beforeAll(async () => {
    page = await (await browser.newContext()).newPage()
  })

  it('a protected route sends the person to our sign-in, then consent, then back to the route', async () => {
    await page.goto(`${baseURL}/profile`)
    expect(page.url().startsWith(`${issuer}/account/sign-in?`)).toBe(true)
    expect(await page.locator('#client-name').textContent()).toBe('Acme Shop')
    await signInAs(page, ALICE, (u) => !u.pathname.startsWith('/account/sign-in'))
    expect(await page.locator('h1').textContent()).toBe('Acme Shop wants to access your account')
    await approveConsent(page, `${baseURL}/profile`)
  })

  it('the app sees the person in the ID token (req.oidc.user) and in our userinfo (fetchUserInfo)', async () => {
    const seen = JSON.parse(await body(page))
    expect(seen.user).toEqual({
      sub: 'alice-1',
      name: 'Alice Example',
      email: 'alice@example.com',
      email_verified: true,
      sid: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      amr: ['pwd'],
      acr: '1',
    })
    expect(seen.userinfo).toEqual({ sub: 'alice-1', name: 'Alice Example', email: 'alice@example.com', email_verified: true })
    await page.goto(baseURL)
    expect(await body(page)).toBe('signed in as Alice Example')
  })

  it("the app's /logout ends our session too and comes back to the app's baseURL", async () => {
    const seen: string[] = []
    page.on('request', (r) => {
      if (r.isNavigationRequest()) seen.push(r.url())
    })
    await page.goto(`${baseURL}/logout`)
    await page.waitForURL(`${baseURL}/`)
    expect(await body(page)).toBe('signed out')
    const endSession = new URL(seen.find((u) => u.startsWith(`${issuer}/connect/endsession?`))!)
    expect([...endSession.searchParams.keys()].sort()).toEqual(['client_id', 'id_token_hint', 'post_logout_redirect_uri'])
    expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(baseURL)
    // Our session is over: the protected route asks for sign-in again.
    await page.goto(`${baseURL}/profile`)
    expect(page.url().startsWith(`${issuer}/account/sign-in?`)).toBe(true)
  })
})
