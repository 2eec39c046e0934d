// The authorization code flow over app.inject, the way a browser without JavaScript drives it:
// cookies kept, the sign-in and consent forms posted with their CSRF tokens, redirects followed
// by hand so that every hop can be asserted. Clients: `web` (confidential, asks consent), `spa`
// (public, no consent), `nopkce` (confidential, PKCE optional), `cc-only`.
import { createHash, randomBytes } from 'node:crypto'
import { expect } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import { createTestApp, FORM, form, type TestApp } from '../../helpers/app.js'
import { csrfIn, postForm, withCookies } from '../../helpers/http.js'
import { signInWithForm } from '../../helpers/sign-in.js'

export const WEB_CB = 'https://web.example/cb'
export const SPA_CB = 'https://spa.example/cb'

export function authorizeSeed() {
  return {
    apiScopes: [{ name: 'orders.read', displayName: 'Read your orders' }, { name: 'orders.write' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read', 'orders.write'], secrets: [{ value: 'api-secret' }] }],
    identityResources: ['openid', 'profile', 'email', 'offline_access'],
    clients: [
      {
        clientId: 'web',
        clientName: 'Web <App>',
        secrets: [{ value: 'web-secret' }],
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid', 'profile', 'email', 'orders.read', 'offline_access'],
        allowOfflineAccess: true,
        requireConsent: true,
        redirectUris: [WEB_CB, 'https://web.example/other'],
        postLogoutRedirectUris: ['https://web.example/bye'],
        allowedTenants: ['acme'],
        identityProviderRestrictions: ['corp-ad'],
      },
      {
        clientId: 'spa',
        clientName: 'Single-page app',
        requireClientSecret: false,
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid', 'profile', 'orders.read', 'offline_access'],
        allowOfflineAccess: true,
        redirectUris: [SPA_CB],
      },
      {
        clientId: 'nopkce',
        secrets: [{ value: 'nopkce-secret' }],
        allowedGrantTypes: ['authorization_code'],
        requirePkce: false,
        allowedScopes: ['openid', 'orders.read'],
        redirectUris: ['https://nopkce.example/cb'],
      },
      {
        clientId: 'cc-only',
        secrets: [{ value: 'cc-secret' }],
        allowedGrantTypes: ['client_credentials'],
        allowedScopes: ['orders.read'],
        redirectUris: ['https://cc.example/cb'],
      },
      {
        clientId: 'off',
        enabled: false,
        secrets: [{ value: 'off-secret' }],
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid'],
        redirectUris: ['https://off.example/cb'],
      },
    ],
    users: [
      {
        subjectId: 'u-alice',
        username: 'alice',
        password: 'alice-pw',
        claims: { name: 'Alice Example', family_name: 'Example', email: 'alice@example.com', email_verified: true },
      },
      { subjectId: 'u-bob', username: 'bob', password: 'bob-pw', claims: { name: 'Bob' } },
    ],
    // acr_values idp: names a configured provider (never contacted here).
    identityProviders: [
      { scheme: 'corp-ad', displayName: 'Corp AD', type: 'oidc', authority: 'https://corp-ad.example', clientId: 'authz' },
    ],
  }
}

export async function createAuthorizeTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const authz = await createTestApp({ env })
  await applySeed(authz.db, authorizeSeed())
  return authz
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/** /connect/authorize?… for `web` with PKCE, state and nonce, unless overridden (undefined drops a parameter). */
export function authorizeUrl(params: Record<string, string | undefined> = {}, challenge = pkcePair().challenge): string {
  const all: Record<string, string | undefined> = {
    client_id: 'web',
    redirect_uri: WEB_CB,
    response_type: 'code',
    scope: 'openid profile',
    state: 'st-1',
    nonce: 'n-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...params,
  }
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(all)) if (v !== undefined) q.append(k, v)
  return `/connect/authorize?${q}`
}

/** A location header as a URL (relative ones against the issuer). */
export function located(res: { headers: Record<string, unknown> }): URL {
  return new URL(String(res.headers.location), 'https://authz.test')
}

/** Signs in on the sign-in page the authorization request sent us to; returns cookies and where it sends us. */
export async function signInAt(authz: TestApp, signInLocation: string, username = 'alice', password = 'alice-pw', cookie = '') {
  const { res, cookie: signedIn } = await signInWithForm(authz.app, { location: signInLocation }, username, password, cookie)
  expect(res.statusCode).toBe(303)
  return { cookie: signedIn, next: String(res.headers.location) }
}

/** A session for `username` (signed in through the account page). */
export async function session(authz: TestApp, username = 'alice', password = 'alice-pw'): Promise<string> {
  return (await signInAt(authz, '/account/sign-in?return_to=%2Faccount', username, password)).cookie
}

/** Answers the consent page shown at `url` with `decision`. */
export async function consent(authz: TestApp, url: string, cookie: string, decision: 'approve' | 'deny', remember = false) {
  const page = await authz.app.inject({ method: 'GET', url, headers: { cookie } })
  expect(page.statusCode).toBe(200)
  const jar = withCookies(cookie, page.headers['set-cookie'])
  const action = /<form method="post" action="([^"]+)"/.exec(page.body)![1]!.replace(/&amp;/g, '&')
  return authz.app.inject({
    method: 'POST',
    url: action,
    headers: { ...FORM, cookie: jar },
    payload: form({ csrf: csrfIn(page.body), decision, ...(remember ? { remember: 'yes' } : {}) }),
  })
}

/** Runs the flow for `web` with a signed-in `cookie` and consent given; returns the code and the verifier. */
export async function codeFor(authz: TestApp, cookie: string, params: Record<string, string | undefined> = {}, client = 'web') {
  const { verifier, challenge } = pkcePair()
  const url = authorizeUrl({ ...(client === 'spa' ? { client_id: 'spa', redirect_uri: SPA_CB } : {}), ...params }, challenge)
  let res = await authz.app.inject({ method: 'GET', url, headers: { cookie } })
  if (res.statusCode === 200) res = await consent(authz, url, cookie, 'approve')
  expect(res.statusCode).toBe(303)
  const back = located(res)
  const code = back.searchParams.get('code')
  expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/)
  return { code: code!, verifier, back }
}

export function redeem(
  authz: TestApp,
  params: Record<string, string>,
  auth: Record<string, string> = { client_id: 'web', client_secret: 'web-secret' },
) {
  return postForm(authz.app, '/connect/token', { grant_type: 'authorization_code', redirect_uri: WEB_CB, ...auth, ...params })
}
