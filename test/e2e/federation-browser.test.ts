// Sign-in through another identity provider, end to end: two servers of this project on loopback,
// the upstream (http://127.0.0.1:<port>) as the OpenID Connect provider and authz
// (http://localhost:<port>, so that each keeps its own cookies) federating it as `corp`;
// openid-client as the relying party of authz, headless Chromium as the person. The home-realm
// screen, idp: forwarding and an email domain each lead through the upstream and back, always to
// the same stable sub; a tampered state and an upstream that does not answer end on pages that say
// so; RP-initiated logout reaches the upstream, and the upstream's back-channel logout ends the
// session at authz.
import { createServer, type Server } from 'node:net'
import * as client from 'openid-client'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { applySeed } from '../../src/seed/apply.js'
import { startAuthz, type Authz } from './authz-server.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'
import { startSite, type Site } from './site.js'

warnIfNoChromium('the federation browser tests')

let upstream: Authz
let authz: Authz
let rp: Site
let browser: Browser
let silent: Server
let web: client.Configuration
const SHOTS = process.env.SCREENSHOT_DIR

beforeAll(async () => {
  if (!haveChromium) return
  rp = await startSite((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end('<!doctype html><title>Relying party</title><h1>Relying party</h1>')
  })
  // An upstream that accepts connections and never answers.
  silent = createServer(() => undefined)
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()))
  const silentPort = (silent.address() as { port: number }).port
  upstream = await startAuthz({
    identityResources: ['openid', 'profile', 'email'],
    users: [
      {
        subjectId: 'up-alice',
        username: 'alice',
        password: 'alice-up-pw',
        claims: { name: 'Alice Upstream', email: 'alice@example.com', email_verified: true },
      },
    ],
  })
  authz = await startAuthz(
    {
      identityResources: ['openid', 'profile', 'email'],
      clients: [
        {
          clientId: 'web',
          clientName: 'Acme Shop',
          secrets: [{ value: 'web-secret' }],
          allowedGrantTypes: ['authorization_code'],
          allowedScopes: ['openid', 'profile', 'email'],
          redirectUris: [`${rp.origin}/cb`],
          postLogoutRedirectUris: [`${rp.origin}/bye`],
        },
      ],
      users: [{ subjectId: 'u-bob', username: 'bob', password: 'bob-pw', claims: { name: 'Bob Local' } }],
      identityProviders: [
        {
          scheme: 'corp',
          displayName: 'Corporate sign-in',
          type: 'oidc',
          authority: upstream.issuer,
          clientId: 'authz-rp',
          clientSecret: 'rp-secret',
          emailDomains: ['example.com'],
        },
        { scheme: 'slow', displayName: 'Slow ID', type: 'oidc', authority: `http://127.0.0.1:${silentPort}`, clientId: 'authz' },
      ],
    },
    { issuerHost: 'localhost', upstream: { timeoutSeconds: 1 } },
  )
  // The upstream registers authz once authz's address is known.
  await applySeed(upstream.db, {
    clients: [
      {
        clientId: 'authz-rp',
        clientName: 'Acme authz',
        secrets: [{ value: 'rp-secret' }],
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid', 'profile', 'email'],
        redirectUris: [`${authz.issuer}/federation/corp/signin`],
        postLogoutRedirectUris: [`${authz.issuer}/federation/corp/signout-callback`],
        backChannelLogoutUri: `${authz.issuer}/federation/corp/backchannel-logout`,
      },
    ],
  })
  web = await client.discovery(new URL(authz.issuer), 'web', 'web-secret', client.ClientSecretBasic('web-secret'), {
    execute: [client.allowInsecureRequests],
  })
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await authz?.close()
  await upstream?.close()
  await rp?.close()
  silent?.close()
})

async function startAt(page: Page, params: Record<string, string> = {}) {
  const verifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const nonce = client.randomNonce()
  const url = client.buildAuthorizationUrl(web, {
    redirect_uri: `${rp.origin}/cb`,
    scope: 'openid profile email',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...params,
  })
  await page.goto(url.href)
  return { verifier, state, nonce }
}

/** On the upstream's sign-in page: signs in, and waits to be back at the relying party. */
async function signInUpstream(page: Page) {
  await page.waitForURL((u) => u.origin === new URL(upstream.issuer).origin && u.pathname === '/account/sign-in')
  await page.fill('#username', 'alice')
  await page.fill('#password', 'alice-up-pw')
  await Promise.all([page.waitForURL(`${rp.origin}/cb?**`), page.click('button[type=submit]')])
}

async function tokensAt(page: Page, checks: { verifier: string; state: string; nonce: string }) {
  const tokens = await client.authorizationCodeGrant(web, new URL(page.url()), {
    pkceCodeVerifier: checks.verifier,
    expectedState: checks.state,
    expectedNonce: checks.nonce,
  })
  return { tokens, claims: tokens.claims()! }
}

const shot = async (page: Page, name: string) => {
  if (SHOTS) await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true })
}

describe.skipIf(!haveChromium)('sign-in through another identity provider, in a browser', () => {
  let ctx: BrowserContext
  let page: Page
  let sub: string
  const fresh = async () => {
    await ctx?.close()
    ctx = await browser.newContext()
    page = await ctx.newPage()
  }
  afterAll(async () => ctx?.close())

  it('the home-realm screen: the provider button leads through the upstream and back', async () => {
    await fresh()
    const checks = await startAt(page)
    await page.waitForURL((u) => u.pathname === '/account/sign-in')
    await shot(page, 'federation-sign-in')
    const button = page.getByRole('link', { name: /Corporate sign-in/ })
    await expect(button.isVisible()).resolves.toBe(true)
    await button.click()
    await signInUpstream(page)
    const { claims } = await tokensAt(page, checks)
    expect(claims).toMatchObject({ iss: authz.issuer, aud: 'web', idp: 'corp', amr: ['pwd'], name: 'Alice Upstream' })
    sub = claims.sub
  })

  it('idp:corp skips the sign-in page, and the sub is the same', async () => {
    await fresh()
    const checks = await startAt(page, { acr_values: 'idp:corp' })
    await signInUpstream(page)
    expect((await tokensAt(page, checks)).claims).toMatchObject({ sub, idp: 'corp' })
  })

  it('an email address of the provider domain, with no password, forwards there through one page naming it', async () => {
    await fresh()
    const checks = await startAt(page)
    await page.waitForURL((u) => u.pathname === '/account/sign-in')
    await page.fill('#username', 'alice@example.com')
    await page.click('button[type=submit]')
    await expect(page.locator('h1').textContent()).resolves.toBe('Continue with Corporate sign-in')
    await page.getByRole('link', { name: 'Continue with Corporate sign-in' }).click()
    await signInUpstream(page)
    expect((await tokensAt(page, checks)).claims).toMatchObject({ sub, idp: 'corp' })
  })

  it('a tampered state ends on a page that says so, with no session', async () => {
    await fresh()
    const res = await page.goto(`${authz.issuer}/federation/corp/signin?code=x&state=tampered`)
    expect(res?.status()).toBe(400)
    await expect(page.locator('h1').textContent()).resolves.toBe('This sign-in cannot be completed')
    expect((await ctx.cookies(authz.issuer)).map((c) => c.name)).not.toContain('authz-session')
  })

  it('an upstream that does not answer: the app gets temporarily_unavailable, in bounded time', async () => {
    await fresh()
    const { state } = await startAt(page)
    await page.waitForURL((u) => u.pathname === '/account/sign-in')
    const started = Date.now()
    await Promise.all([page.waitForURL(`${rp.origin}/cb?**`), page.getByRole('link', { name: /Slow ID/ }).click()])
    expect(Date.now() - started).toBeLessThan(5000)
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'the identity provider could not complete the sign-in',
      state,
      iss: authz.issuer,
    })
  })

  it('RP-initiated logout reaches the upstream and comes back to the app with its state', async () => {
    await fresh()
    const checks = await startAt(page, { acr_values: 'idp:corp' })
    await signInUpstream(page)
    const { tokens } = await tokensAt(page, checks)
    const bye = client.buildEndSessionUrl(web, {
      id_token_hint: tokens.id_token!,
      post_logout_redirect_uri: `${rp.origin}/bye`,
      state: 'bye-state',
    })
    await Promise.all([page.waitForURL(`${rp.origin}/bye?**`), page.goto(bye.href)])
    expect(new URL(page.url()).searchParams.get('state')).toBe('bye-state')
    // Signed out upstream too: its account page asks for a sign-in again.
    await page.goto(`${upstream.issuer}/account`)
    expect(new URL(page.url()).pathname).toBe('/account/sign-in')
  })

  it("the upstream's back-channel logout ends the session here", async () => {
    await fresh()
    const checks = await startAt(page, { acr_values: 'idp:corp' })
    await signInUpstream(page)
    await tokensAt(page, checks)
    // Only the session this upstream session started ends (the logout token names its sid); the
    // earlier tests' browsers keep theirs.
    const live = async () =>
      (await authz.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM user_sessions WHERE idp = 'corp'`)).rows[0]!.n
    const before = await live()
    expect(before).toBeGreaterThan(1)
    await page.goto(`${upstream.issuer}/account/sign-out`)
    await page.click('button[type=submit]')
    await vi.waitFor(async () => expect(await live()).toBe(before - 1), { timeout: 5000 })
  })
})
