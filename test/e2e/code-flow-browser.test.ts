// The authorization code flow end to end: openid-client (v6) as the relying party, headless
// Chromium as the person, through our real sign-in, consent and sign-out pages. Discovery,
// authorization code + PKCE (S256) with state, nonce and RFC 9207 iss checked by the library, ID
// token validation, userinfo, refresh with rotation, reuse of a rotated refresh token revoking the
// family, revocation, RP-initiated logout, prompt=none with and without a session, and a client
// without requireConsent skipping the consent screen. A second server on another origin
// (localhost vs 127.0.0.1) plays the client's redirect URI.
import * as client from 'openid-client'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALICE, approveConsent, signInAs, startAuthz, type Authz } from './authz-server.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'
import { startSite, type Site } from './site.js'

warnIfNoChromium('the authorization code flow browser tests')

let authz: Authz
let issuer: URL
let browser: Browser
let rp: Site
let rpOrigin: string
const SHOTS = process.env.SCREENSHOT_DIR

beforeAll(async () => {
  if (!haveChromium) return
  rp = await startSite((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end('<!doctype html><title>Client</title><h1>Client</h1>')
  })
  rpOrigin = rp.origin
  authz = await startAuthz({
    apiScopes: [{ name: 'orders.read', displayName: 'Read your orders', description: 'See the orders you placed and their status' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read'], secrets: [{ value: 'orders-secret' }] }],
    identityResources: ['openid', 'profile', 'email', 'offline_access'],
    clients: [
      {
        clientId: 'web',
        clientName: 'Acme Shop',
        secrets: [{ value: 'web-secret' }],
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid', 'profile', 'email', 'orders.read', 'offline_access'],
        allowOfflineAccess: true,
        requireConsent: true,
        redirectUris: [`${rpOrigin}/cb`],
        postLogoutRedirectUris: [`${rpOrigin}/bye`],
      },
      {
        clientId: 'spa',
        clientName: 'Acme SPA',
        requireClientSecret: false,
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid', 'profile'],
        redirectUris: [`${rpOrigin}/spa`],
      },
    ],
    users: [{ ...ALICE, claims: { ...ALICE.claims, email_verified: true } }],
  })
  issuer = new URL(authz.issuer)
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await authz?.close()
  await rp?.close()
})

async function rpConfig(clientId: string, secret?: string): Promise<client.Configuration> {
  const auth = secret ? client.ClientSecretBasic(secret) : client.None()
  const config = await client.discovery(issuer, clientId, secret, auth, { execute: [client.allowInsecureRequests] })
  client.enableNonRepudiationChecks(config)
  return config
}

/** Starts an authorization request in the browser; returns the URL the browser ends up at (the client's, or one of ours). */
async function authorize(page: Page, config: client.Configuration, params: Record<string, string>, redirectUri: string) {
  const verifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const nonce = client.randomNonce()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...params,
  })
  await page.goto(url.href)
  return { verifier, state, nonce }
}

async function signIn(page: Page) {
  await signInAs(page, ALICE, (u) => !u.pathname.startsWith('/account/sign-in'))
}

const shot = async (page: Page, name: string) => {
  if (SHOTS) await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true })
}

describe.skipIf(!haveChromium)('authorization code flow with openid-client and Chromium', () => {
  let ctx: BrowserContext
  let page: Page
  beforeAll(async () => {
    ctx = await browser.newContext()
    page = await ctx.newPage()
  })
  afterAll(async () => ctx?.close())

  it('discovery names everything the library needs', async () => {
    const meta = (await rpConfig('web', 'web-secret')).serverMetadata()
    expect(meta).toMatchObject({
      authorization_endpoint: `${issuer.origin}/connect/authorize`,
      userinfo_endpoint: `${issuer.origin}/connect/userinfo`,
      end_session_endpoint: `${issuer.origin}/connect/endsession`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      id_token_signing_alg_values_supported: ['RS256', 'ES256'],
    })
  })

  let tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers
  let web: client.Configuration

  it('prompt=none without a session: login_required comes back to the client', async () => {
    web = await rpConfig('web', 'web-secret')
    const { state } = await authorize(page, web, { prompt: 'none' }, `${rpOrigin}/cb`)
    await page.waitForURL(`${rpOrigin}/cb?**`)
    const back = new URL(page.url())
    expect(Object.fromEntries(back.searchParams)).toEqual({
      error: 'login_required',
      error_description: 'the user must sign in',
      state,
      iss: issuer.origin,
    })
  })

  it('signs in, consents, and gets tokens the library validates (PKCE, state, nonce, iss, ID token)', async () => {
    const { verifier, state, nonce } = await authorize(
      page,
      web,
      { scope: 'openid profile email orders.read offline_access' },
      `${rpOrigin}/cb`,
    )
    expect(await page.locator('#client-name').textContent()).toBe('Acme Shop')
    await shot(page, 'sign-in')
    await signIn(page)
    expect(await page.locator('h1').textContent()).toBe('Acme Shop wants to access your account')
    expect(await page.locator('#scopes li').allTextContents()).toEqual([
      'Sign you inYour user identifier, so that the app knows it is you',
      'Your profileName, nickname, picture, website, gender, birthdate, time zone and language',
      'Your e-mail addressIncluding whether it is verified',
      'Read your ordersSee the orders you placed and their status',
      'Stay signed inAccess when you are not using the app',
    ])
    await shot(page, 'consent')
    await approveConsent(page, `${rpOrigin}/cb?**`)
    tokens = await client.authorizationCodeGrant(web, new URL(page.url()), {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    })
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'openid profile email orders.read offline_access' })
    expect(tokens.claims()).toMatchObject({
      iss: issuer.origin,
      sub: 'alice-1',
      aud: 'web',
      nonce,
      name: 'Alice Example',
      email: 'alice@example.com',
      amr: ['pwd'],
    })
    expect(tokens.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it("userinfo answers the token with the user's claims", async () => {
    expect(await client.fetchUserInfo(web, tokens.access_token, 'alice-1')).toEqual({
      sub: 'alice-1',
      name: 'Alice Example',
      email: 'alice@example.com',
      email_verified: true,
    })
  })

  it('prompt=none with a session but no remembered consent: consent_required; once remembered, a code', async () => {
    const { state } = await authorize(page, web, { prompt: 'none', scope: 'openid profile' }, `${rpOrigin}/cb`)
    await page.waitForURL(`${rpOrigin}/cb?**`)
    expect(new URL(page.url()).searchParams.get('error')).toBe('consent_required')
    await authorize(page, web, { scope: 'openid profile' }, `${rpOrigin}/cb`)
    await page.check('input[name=remember]')
    await approveConsent(page, `${rpOrigin}/cb?**`)
    const again = await authorize(page, web, { prompt: 'none', scope: 'openid profile' }, `${rpOrigin}/cb`)
    await page.waitForURL(`${rpOrigin}/cb?**`)
    const res = await client.authorizationCodeGrant(web, new URL(page.url()), {
      pkceCodeVerifier: again.verifier,
      expectedState: again.state,
      expectedNonce: again.nonce,
    })
    expect(res.claims()?.sub).toBe('alice-1')
    expect(state).not.toBe(again.state)
  })

  it('a public client without requireConsent: no consent screen, straight back with a code', async () => {
    const spa = await rpConfig('spa')
    const r = await authorize(page, spa, { scope: 'openid profile' }, `${rpOrigin}/spa`)
    await page.waitForURL(`${rpOrigin}/spa?**`)
    const res = await client.authorizationCodeGrant(spa, new URL(page.url()), {
      pkceCodeVerifier: r.verifier,
      expectedState: r.state,
      expectedNonce: r.nonce,
    })
    expect(res.claims()).toMatchObject({ sub: 'alice-1', aud: 'spa', name: 'Alice Example' })
  })

  it('refresh rotates; reusing the rotated token revokes the whole family', async () => {
    const first = tokens.refresh_token!
    const second = await client.refreshTokenGrant(web, first)
    expect(second.refresh_token).not.toBe(first)
    expect(second.claims()).toMatchObject({ sub: 'alice-1', aud: 'web' })
    await expect(client.refreshTokenGrant(web, first)).rejects.toMatchObject({
      error: 'invalid_grant',
      error_description: 'refresh token already used',
    })
    await expect(client.refreshTokenGrant(web, second.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
    await expect(client.fetchUserInfo(web, second.access_token, 'alice-1')).rejects.toMatchObject({ status: 401 })
  })

  it('revocation (RFC 7009) of a refresh token ends its family', async () => {
    const r = await authorize(page, web, { scope: 'openid orders.read offline_access', prompt: 'consent' }, `${rpOrigin}/cb`)
    await approveConsent(page, `${rpOrigin}/cb?**`)
    const fresh = await client.authorizationCodeGrant(web, new URL(page.url()), {
      pkceCodeVerifier: r.verifier,
      expectedState: r.state,
      expectedNonce: r.nonce,
    })
    await client.tokenRevocation(web, fresh.refresh_token!)
    await expect(client.refreshTokenGrant(web, fresh.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
    tokens = fresh
  })

  it('logout with the ID token as hint: the session ends, back at the registered URI with state', async () => {
    const url = client.buildEndSessionUrl(web, {
      id_token_hint: tokens.id_token!,
      post_logout_redirect_uri: `${rpOrigin}/bye`,
      state: 'bye-1',
    })
    await page.goto(url.href)
    await page.waitForURL(`${rpOrigin}/bye?**`)
    expect(new URL(page.url()).searchParams.get('state')).toBe('bye-1')
    // Signed out: prompt=none answers login_required again.
    await authorize(page, web, { prompt: 'none' }, `${rpOrigin}/cb`)
    await page.waitForURL(`${rpOrigin}/cb?**`)
    expect(new URL(page.url()).searchParams.get('error')).toBe('login_required')
  })

  it('logout without proof asks first, then shows the signed-out page', async () => {
    await page.goto(`${issuer.origin}/account/sign-in?return_to=%2Faccount`)
    await signIn(page)
    await page.goto(`${issuer.origin}/connect/endsession?client_id=web`)
    expect(await page.locator('h1').textContent()).toBe('Sign out?')
    await shot(page, 'logout-confirm')
    await page.click('button[value=sign-out]')
    expect(await page.locator('h1').textContent()).toBe('You are signed out')
    await shot(page, 'signed-out')
    await page.goto(`${issuer.origin}/account`)
    expect(new URL(page.url()).pathname).toBe('/account/sign-in')
  })
})
