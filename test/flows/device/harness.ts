// A device-flow test app: createTestApp's setup plus a seed with device clients and users, and
// helpers for the device authorization endpoint, the token endpoint and the device page (driven
// over app.inject the way a browser without JavaScript would: cookies kept, CSRF tokens posted).
import { createHash } from 'node:crypto'
import { expect } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import { basic, createTestApp, form, FORM, type TestApp } from '../../helpers/app.js'
import { csrfIn, postForm, withCookies } from '../../helpers/http.js'
import { signInWithForm } from '../../helpers/sign-in.js'

export const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code'
export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' }
export const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/

export const deviceSeed = {
  apiScopes: [{ name: 'orders.read', displayName: 'Read your orders' }, { name: 'orders.write' }],
  apiResources: [{ name: 'orders-api', scopes: ['orders.read', 'orders.write'], secrets: [{ value: 'api-secret' }] }],
  identityResources: [
    { name: 'openid', displayName: 'Your user identifier', claims: ['sub'] },
    { name: 'profile', displayName: 'Your name', claims: ['name'] },
    'email',
    'offline_access',
  ],
  clients: [
    {
      clientId: 'tv',
      clientName: 'Living Room <TV>',
      requireClientSecret: false,
      allowedGrantTypes: [DEVICE, 'refresh_token'],
      allowedScopes: ['openid', 'profile', 'orders.read', 'offline_access'],
      allowOfflineAccess: true,
      allowedCorsOrigins: ['https://tv.example'],
    },
    {
      clientId: 'console',
      clientName: 'Game Console',
      secrets: [{ value: 'console-secret' }],
      allowedGrantTypes: [DEVICE],
      allowedScopes: ['openid', 'orders.read', 'offline_access'],
      pollingInterval: 7,
    },
    { clientId: 'other-tv', requireClientSecret: false, allowedGrantTypes: [DEVICE], allowedScopes: ['openid', 'orders.read'] },
    { clientId: 'cc-only', secrets: [{ value: 'cc-secret' }], allowedGrantTypes: ['client_credentials'], allowedScopes: ['orders.read'] },
  ],
  users: [
    { subjectId: 'u-alice', username: 'alice', password: 'alice-pw', claims: { name: 'Alice Example', email: 'alice@example.com' } },
    { subjectId: 'u-bob', username: 'bob', password: 'bob-pw', claims: { name: 'Bob' } },
  ],
}

export async function createDeviceTestApp(opts: { env?: Record<string, string> } = {}): Promise<TestApp> {
  const authz = await createTestApp(opts)
  await applySeed(authz.db, deviceSeed)
  return authz
}

export const TV = { client_id: 'tv' }
export const CONSOLE = { authorization: basic('console', 'console-secret') }

/** POST /connect/deviceauthorization with form `params` (and headers, e.g. Basic). */
export function authorize(
  authz: TestApp,
  params: Record<string, string>,
  headers: Record<string, string> = {},
  remoteAddress = '127.0.0.1',
) {
  return authz.app.inject({
    method: 'POST',
    url: '/connect/deviceauthorization',
    headers: { ...FORM, ...headers },
    payload: form(params),
    remoteAddress,
  })
}

export interface Started {
  device_code: string
  user_code: string
  verification_uri: string
  verification_uri_complete: string
  expires_in: number
  interval: number
}

export async function start(
  authz: TestApp,
  params: Record<string, string> = { ...TV, scope: 'openid profile orders.read offline_access' },
  headers: Record<string, string> = {},
): Promise<Started> {
  const res = await authorize(authz, params, headers)
  expect(res.statusCode).toBe(200)
  return res.json()
}

export function poll(authz: TestApp, deviceCode: string, client: Record<string, string> = TV, headers: Record<string, string> = {}) {
  return postForm(authz.app, '/connect/token', { ...client, grant_type: DEVICE, device_code: deviceCode }, headers)
}

export const devicePath = (userCode: string) => `/device?user_code=${encodeURIComponent(userCode)}`

/** The stored id of the request of `userCode` (found by the code's hash, as the store keeps it). */
export async function requestIdOf(authz: TestApp, userCode: string): Promise<string> {
  const hash = createHash('sha256').update(userCode.replace('-', '')).digest('base64url')
  return (await authz.db.query<{ id: string }>('SELECT id FROM device_authorizations WHERE user_code_hash = $1', [hash])).rows[0]!.id
}

/** Signs in through the shared sign-in page, returning to the device page of `userCode`. */
export async function signInForDevice(authz: TestApp, userCode: string, user = { username: 'alice', password: 'alice-pw' }) {
  const { res, cookie } = await signInWithForm(authz.app, { returnTo: devicePath(userCode) }, user.username, user.password)
  expect(res.statusCode).toBe(303)
  return cookie
}

/** Opens the device page with `cookie` and posts a decision from it. */
export async function decideWith(authz: TestApp, userCode: string, decision: string, cookie: string, remoteAddress = '127.0.0.1') {
  const shown = await authz.app.inject({ method: 'GET', url: devicePath(userCode), headers: { cookie }, remoteAddress })
  expect(shown.statusCode).toBe(200)
  return authz.app.inject({
    method: 'POST',
    url: devicePath(userCode),
    remoteAddress,
    headers: { ...FORM, cookie: withCookies(cookie, shown.headers['set-cookie']) },
    payload: form({ csrf: csrfIn(shown.body), decision }),
  })
}

/** Signs in as `user` and approves or denies the request of `userCode`. */
export async function decide(
  authz: TestApp,
  userCode: string,
  decision: 'approve' | 'deny',
  user?: { username: string; password: string },
) {
  const cookie = await signInForDevice(authz, userCode, user)
  const res = await decideWith(authz, userCode, decision, cookie)
  expect(res.statusCode).toBe(200)
  return res
}
