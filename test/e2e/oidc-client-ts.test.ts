// oidc-client-ts as a browser app on its own origin (localhost vs our 127.0.0.1, another port),
// configured only as its documentation configures a UserManager: authority, client_id,
// redirect_uri, response_type 'code', scope, loadUserInfo. Everything runs in the page, in headless
// Chromium, loading the library's browser bundle: discovery, signinRedirect (PKCE), our sign-in
// page, signinRedirectCallback (the code redeemed by a public client with its verifier), userinfo,
// and signinSilent, which the library answers with the refresh token. Every call to us is a
// cross-origin fetch, so each works only if our CORS answers let the page read it.
import { readFileSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALICE, signInAs, startAuthz, type Authz } from './authz-server.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'
import { startSite, type Site } from './site.js'

warnIfNoChromium('the oidc-client-ts browser test')

// The browser bundle (an IIFE defining the global `oidc`), which the package does not export.
const BUNDLE = readFileSync(new URL('../../node_modules/oidc-client-ts/dist/browser/oidc-client-ts.min.js', import.meta.url), 'utf8')

let authz: Authz
let issuer: string
let site: Site
let appOrigin: string
let browser: Browser
let page: Page
/** What the page asked of us: "METHOD /path STATUS", in order. */
const calls: string[] = []

/** The app: one page that configures the UserManager; /callback finishes the sign-in by itself. */
function appPage(path: string): string {
  const settings = {
    authority: issuer,
    client_id: 'spa',
    redirect_uri: `${appOrigin}/callback`,
    post_logout_redirect_uri: `${appOrigin}/signed-out`,
    response_type: 'code',
    scope: 'openid profile offline_access',
    loadUserInfo: true,
  }
  return `<!doctype html><title>SPA</title><button id="sign-in" onclick="mgr.signinRedirect()">Sign in</button>
  <button id="sign-out" onclick="mgr.revokeTokens().then(() => mgr.signoutRedirect())">Sign out</button>
  <script src="/oidc-client-ts.js"></script><script>
    window.mgr = new oidc.UserManager(${JSON.stringify(settings)})
    ${path === '/callback' ? 'window.signedIn = window.mgr.signinRedirectCallback()' : ''}
  </script>`
}

beforeAll(async () => {
  if (!haveChromium) return
  site = await startSite((req, res) => {
    const path = new URL(req.url ?? '/', appOrigin).pathname
    if (path === '/oidc-client-ts.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(BUNDLE)
    res.writeHead(200, { 'content-type': 'text/html' }).end(appPage(path))
  })
  appOrigin = site.origin
  // A browser app: a public client (no secret; PKCE, required by default, protects the code),
  // allowed to read our answers from its origin, with refresh tokens for offline_access.
  authz = await startAuthz({
    identityResources: ['openid', 'profile', 'offline_access'],
    clients: [
      {
        clientId: 'spa',
        clientName: 'Acme SPA',
        requireClientSecret: false,
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid', 'profile', 'offline_access'],
        allowOfflineAccess: true,
        redirectUris: [`${appOrigin}/callback`],
        postLogoutRedirectUris: [`${appOrigin}/signed-out`],
        allowedCorsOrigins: [appOrigin],
      },
    ],
    // No email scope here; the nickname shows the profile claims come through.
    users: [{ ...ALICE, claims: { name: 'Alice Example', nickname: 'ali' } }],
  })
  issuer = authz.issuer
  browser = await launchChromium()
  page = await browser.newPage()
  page.on('response', (res) => {
    const url = new URL(res.url())
    if (url.origin === issuer && res.request().resourceType() === 'fetch')
      calls.push(`${res.request().method()} ${url.pathname} ${res.status()}`)
  })
})
afterAll(async () => {
  await browser?.close()
  await site?.close()
  await authz?.close()
})

interface Signed {
  sub: string
  name: string
  nickname: string
  scope: string
  accessToken: string
  refreshToken: string
  idToken: string
}

describe.skipIf(!haveChromium)('oidc-client-ts in the browser against authz', () => {
  let first: Signed
  it('signinRedirect → our sign-in page → signinRedirectCallback with PKCE; userinfo gives the claims', async () => {
    await page.goto(`${appOrigin}/`)
    await Promise.all([page.waitForURL((u) => u.origin === issuer), page.click('#sign-in')])
    const authorize = new URL(page.url())
    expect(authorize.pathname).toBe('/account/sign-in')
    expect(await page.locator('#client-name').textContent()).toBe('Acme SPA')
    await signInAs(page, ALICE, `${appOrigin}/callback?**`)
    first = await page.evaluate(async () => {
      const user = (await (window as never as { signedIn: Promise<Record<string, never>> }).signedIn) as unknown as {
        profile: Record<string, string>
        scope: string
        access_token: string
        refresh_token: string
        id_token: string
      }
      return {
        sub: user.profile.sub!,
        name: user.profile.name!,
        nickname: user.profile.nickname!,
        scope: user.scope,
        accessToken: user.access_token,
        refreshToken: user.refresh_token,
        idToken: user.id_token,
      }
    })
    expect(first).toMatchObject({ sub: 'alice-1', name: 'Alice Example', nickname: 'ali', scope: 'openid profile offline_access' })
    expect(first.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/)
    // Discovery (on the app's page and again on its callback page), the token request and
    // userinfo, each read by the page across origins.
    const discovery = 'GET /.well-known/openid-configuration 200'
    expect(calls).toEqual([discovery, discovery, 'POST /connect/token 200', 'GET /connect/userinfo 200'])
  })

  it('signinSilent uses the refresh token: new tokens, the old refresh token rotated away', async () => {
    calls.length = 0
    const renewed = await page.evaluate(async () => {
      const user = await (
        window as never as {
          mgr: { signinSilent(): Promise<{ profile: Record<string, string>; access_token: string; refresh_token: string; scope: string }> }
        }
      ).mgr.signinSilent()
      return {
        sub: user.profile.sub,
        name: user.profile.name,
        accessToken: user.access_token,
        refreshToken: user.refresh_token,
        scope: user.scope,
      }
    })
    expect(renewed).toMatchObject({ sub: 'alice-1', name: 'Alice Example', scope: 'openid profile offline_access' })
    expect(renewed.accessToken).not.toBe(first.accessToken)
    expect(renewed.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(renewed.refreshToken).not.toBe(first.refreshToken)
    expect(calls).toEqual(['POST /connect/token 200', 'GET /connect/userinfo 200'])
  })

  it('the first refresh token, used again: the page reads invalid_grant', async () => {
    const error = await page.evaluate(async (refresh_token) => {
      const mgr = (window as never as { mgr: { metadataService: { getTokenEndpoint(): Promise<string> } } }).mgr
      const body = new URLSearchParams({ grant_type: 'refresh_token', client_id: 'spa', refresh_token })
      const res = await fetch(await mgr.metadataService.getTokenEndpoint(), { method: 'POST', body })
      return { status: res.status, json: await res.json() }
    }, first.refreshToken)
    expect(error).toEqual({ status: 400, json: { error: 'invalid_grant', error_description: 'refresh token already used' } })
  })

  it('sign-out: revokeTokens from the page (RFC 7009), then signoutRedirect ends our session and comes back', async () => {
    const current = await page.evaluate(async () => {
      const user = await (window as never as { mgr: { getUser(): Promise<{ refresh_token: string }> } }).mgr.getUser()
      return user.refresh_token
    })
    calls.length = 0
    await Promise.all([page.waitForURL(`${appOrigin}/signed-out**`), page.click('#sign-out')])
    // The access token and then the refresh token, each revoked with a preflight-free form POST.
    expect(calls).toEqual(['POST /connect/revocation 200', 'POST /connect/revocation 200'])
    const refreshed = await page.evaluate(async (refresh_token) => {
      const mgr = (window as never as { mgr: { metadataService: { getTokenEndpoint(): Promise<string> } } }).mgr
      const res = await fetch(await mgr.metadataService.getTokenEndpoint(), {
        method: 'POST',
        body: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'spa', refresh_token }),
      })
      return { status: res.status, error: (await res.json()).error }
    }, current)
    expect(refreshed).toEqual({ status: 400, error: 'invalid_grant' })
    // Our session is over: signing in again shows the sign-in page.
    await Promise.all([page.waitForURL((u) => u.origin === issuer), page.click('#sign-in')])
    expect(new URL(page.url()).pathname).toBe('/account/sign-in')
  })
})
