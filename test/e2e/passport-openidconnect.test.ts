// passport-openidconnect (with passport 0.7 and express-session on Express 5) as a relying party,
// configured as its README shows: issuer, authorizationURL, tokenURL, userInfoURL, clientID,
// clientSecret, callbackURL, scope, and a verify(issuer, profile, cb). The library sends no PKCE
// (it has no option for it), so its client is registered with requirePkce false; it authenticates
// at the token endpoint with client_secret_post and checks the ID token's iss, aud and exp but not
// its signature (OIDC Core §3.1.3.7 lets a client that received it from the token endpoint rely on
// TLS instead). Headless Chromium signs in through our real sign-in page.
import express from 'express'
import session from 'express-session'
import passport from 'passport'
import OpenIDConnectStrategy, { type Profile } from 'passport-openidconnect'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../src/seed/apply.js'
import { ALICE, signInAs, startAuthz, type Authz } from './authz-server.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'
import { startSite, type Site } from './site.js'

warnIfNoChromium('the passport-openidconnect browser test')

let authz: Authz
let issuer: string
let rp: Site
/** The app's own origin: localhost, so its cookies and ours (127.0.0.1) stay apart as on two sites. */
let baseURL: string
let browser: Browser
/** What the verify callback was given, as the app would store it. */
const verified: Array<{ issuer: string; profile: Profile }> = []

/** The app as the README and the library's example app set it up. */
function rpApp(): express.Express {
  passport.use(
    new OpenIDConnectStrategy(
      {
        issuer,
        authorizationURL: `${issuer}/connect/authorize`,
        tokenURL: `${issuer}/connect/token`,
        userInfoURL: `${issuer}/connect/userinfo`,
        clientID: 'todos',
        clientSecret: 'todos-secret',
        callbackURL: `${baseURL}/cb`,
        scope: ['profile', 'email'],
      },
      function verify(issuer, profile, cb) {
        verified.push({ issuer, profile })
        cb(null, { id: profile.id, name: profile.displayName })
      },
    ),
  )
  passport.serializeUser((user, cb) => cb(null, user))
  passport.deserializeUser((user: Express.User, cb) => cb(null, user))

  const app = express()
  app.use(session({ secret: 'keyboard cat', resave: false, saveUninitialized: false }))
  app.use(passport.authenticate('session'))
  app.get('/login', passport.authenticate('openidconnect'))
  app.get('/cb', passport.authenticate('openidconnect', { failureRedirect: '/login', failureMessage: true }), (_req, res) => {
    res.redirect('/')
  })
  app.get('/', (req, res) => {
    const user: { name?: string } | undefined = req.user
    res.type('text/plain').send(user ? `signed in as ${user.name}` : 'signed out')
  })
  return app
}

/** The app's seed entry; requirePkce false because the library sends no code_challenge. */
const todos = (extra: { requirePkce?: boolean }) => ({
  clientId: 'todos',
  clientName: 'Todos',
  secrets: [{ value: 'todos-secret' }],
  allowedGrantTypes: ['authorization_code'],
  allowedScopes: ['openid', 'profile', 'email'],
  redirectUris: [`${baseURL}/cb`],
  ...extra,
})

beforeAll(async () => {
  if (!haveChromium) return
  rp = await startSite() // the app is attached once the issuer it names is known
  baseURL = rp.origin
  authz = await startAuthz({
    identityResources: ['openid', 'profile', 'email'],
    clients: [todos({ requirePkce: false })],
    users: [{ ...ALICE, claims: { ...ALICE.claims, email_verified: true } }],
  })
  issuer = authz.issuer
  rp.server.on('request', rpApp())
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await authz?.close()
  await rp?.close()
})

describe.skipIf(!haveChromium)('passport-openidconnect against authz in Chromium', () => {
  let page: Page
  beforeAll(async () => {
    page = await (await browser.newContext()).newPage()
  })

  it('signs in through our sign-in page; verify gets our issuer and a profile naming the person', async () => {
    await page.goto(`${baseURL}/login`)
    const authorize = new URL(new URL(page.url()).searchParams.get('return_to')!, issuer)
    expect(authorize.pathname).toBe('/connect/authorize')
    expect(authorize.searchParams.get('scope')).toBe('openid profile email')
    expect(authorize.searchParams.has('code_challenge')).toBe(false)
    expect(await page.locator('#client-name').textContent()).toBe('Todos')
    await signInAs(page, ALICE, `${baseURL}/`)
    expect((await page.locator('body').innerText()).trim()).toBe('signed in as Alice Example')
    expect(verified).toEqual([
      {
        issuer,
        profile: { id: 'alice-1', displayName: 'Alice Example', emails: [{ value: 'alice@example.com' }] },
      },
    ])
  })

  it('registered without requirePkce false, the app is told why: invalid_request, code_challenge is required', async () => {
    await applySeed(authz.db, { clients: [todos({})] })
    const back: string[] = []
    page.on('request', (r) => {
      if (r.isNavigationRequest() && r.url().startsWith(`${baseURL}/cb?`)) back.push(r.url())
    })
    const res = await page.goto(`${baseURL}/login`)
    expect(Object.fromEntries(new URL(back[0]!).searchParams)).toEqual({
      error: 'invalid_request',
      error_description: 'code_challenge is required (PKCE with S256)',
      state: expect.any(String),
      iss: issuer,
    })
    // passport-openidconnect hands the error to Express, whose default handler answers 500.
    expect(res?.status()).toBe(500)
    expect(await page.locator('body').innerText()).toContain('AuthorizationError: code_challenge is required (PKCE with S256)')
    expect(verified).toHaveLength(1)
  })
})
