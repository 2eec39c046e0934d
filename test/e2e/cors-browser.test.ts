// CORS in a real browser: a page served from its own origin discovers us and calls the token
// and revocation endpoints with fetch (a preflighted request: it sends Authorization). It reads
// its answers and its errors; the same page using a client that does not list its origin reads
// nothing (the browser refuses the answer). Then every endpoint a browser app calls, from the
// app's page and from a page on an origin no client lists: discovery (both documents), JWKS,
// token, userinfo (its challenge read through Access-Control-Expose-Headers), revocation and
// device authorization.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../src/seed/apply.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'

warnIfNoChromium('the CORS browser test')

const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code'

let t: TestApp
let site: Server
let browser: Browser
let page: Page
let unlisted: Page
let authz: string
beforeAll(async () => {
  if (!haveChromium) return
  t = await createTestApp()
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  authz = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
  // The app's origin: another host name and port than ours.
  site = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'))
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r))
  const appOrigin = `http://localhost:${(site.address() as AddressInfo).port}`
  await applySeed(t.db, {
    apiScopes: [{ name: 'orders.read' }],
    clients: [
      { clientId: 'spa', secrets: [{ value: 'spa-secret' }], allowedGrantTypes: ['client_credentials'], allowedScopes: ['orders.read'], allowedCorsOrigins: [appOrigin] },
      { clientId: 'backend', secrets: [{ value: 'backend-secret' }], allowedGrantTypes: ['client_credentials'], allowedScopes: ['orders.read'] },
      {
        clientId: 'spa-user', requireClientSecret: false, allowedGrantTypes: ['password', DEVICE], allowedScopes: ['openid', 'profile'],
        allowedCorsOrigins: [appOrigin],
      },
    ],
    identityResources: ['openid', 'profile'],
    users: [{ subjectId: 'alice-1', username: 'alice', password: 'alice-pw', claims: { name: 'Alice Example' } }],
  })
  browser = await launchChromium()
  page = await browser.newPage()
  await page.goto(appOrigin)
  // The same site under its other name: an origin no client lists.
  unlisted = await browser.newPage()
  await unlisted.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}`)
})
afterAll(async () => {
  await browser?.close()
  await new Promise((r) => (site ? site.close(r) : r(undefined)))
  await t?.close()
})

interface Init { method?: string; client?: [string, string]; bearer?: string; body?: Record<string, string> }

/** fetch from the app's page (or another); a CORS refusal surfaces as the TypeError fetch throws. */
function call(path: string, init: Init, from: Page = page) {
  return from.evaluate(
    async ({ url, method, client, bearer, body }) => {
      try {
        const headers: Record<string, string> = {}
        if (client) headers.authorization = `Basic ${btoa(`${client[0]}:${client[1]}`)}`
        if (bearer) headers.authorization = `Bearer ${bearer}`
        const res = await fetch(url, { method, headers, ...(body ? { body: new URLSearchParams(body) } : {}) })
        return { status: res.status, json: await res.json().catch(() => null), challenge: res.headers.get('www-authenticate') }
      } catch (err) {
        return { refused: String(err) }
      }
    },
    { url: `${authz}${path}`, method: init.method ?? 'GET', client: init.client, bearer: init.bearer, body: init.body },
  )
}

describe.skipIf(!haveChromium)('a browser app on its own origin', () => {
  it('reads discovery, gets a token, reads an error, revokes; a client that does not list the origin reads nothing', async () => {
    const discovery = await call('/.well-known/openid-configuration', {})
    expect(discovery).toMatchObject({ status: 200, json: { token_endpoint: expect.stringMatching(/\/connect\/token$/) } })

    const token = await call('/connect/token', { method: 'POST', client: ['spa', 'spa-secret'], body: { grant_type: 'client_credentials' } })
    expect(token).toMatchObject({ status: 200, json: { token_type: 'Bearer' } })

    const wrong = await call('/connect/token', { method: 'POST', client: ['spa', 'wrong'], body: { grant_type: 'client_credentials' } })
    expect(wrong).toMatchObject({ status: 401, json: { error: 'invalid_client' }, challenge: expect.stringMatching(/^Basic /) })

    const access = (token as { json: { access_token: string } }).json.access_token
    expect(await call('/connect/revocation', { method: 'POST', client: ['spa', 'spa-secret'], body: { token: access } })).toMatchObject({ status: 200 })

    const foreign = await call('/connect/token', { method: 'POST', client: ['backend', 'backend-secret'], body: { grant_type: 'client_credentials' } })
    expect(foreign).toEqual({ refused: expect.stringContaining('Failed to fetch') })
  })
})

describe.skipIf(!haveChromium)('every endpoint a browser app calls, from its page and from an unlisted origin', () => {
  const REFUSED = { refused: expect.stringContaining('Failed to fetch') }
  const post = (body: Record<string, string>): Init => ({ method: 'POST', body })

  it('discovery (both documents) and JWKS: readable from any origin', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server', '/.well-known/openid-configuration/jwks']) {
      for (const from of [page, unlisted]) expect(await call(path, {}, from), path).toMatchObject({ status: 200, json: expect.any(Object) })
    }
  })

  it('token, userinfo, revocation, device authorization: the app reads answers and errors; the unlisted origin nothing', async () => {
    const password = post({ grant_type: 'password', client_id: 'spa-user', username: 'alice', password: 'alice-pw', scope: 'openid profile' })
    const token = await call('/connect/token', password)
    expect(token).toMatchObject({ status: 200, json: { token_type: 'Bearer', scope: 'openid profile' } })
    const access = (token as { json: { access_token: string } }).json.access_token
    const cases: [string, Init, { status: number; json?: unknown; challenge?: unknown }][] = [
      ['/connect/token', post({ grant_type: 'refresh_token', client_id: 'spa-user', refresh_token: 'not-a-token' }), { status: 400, json: { error: 'invalid_grant' } }],
      ['/connect/userinfo', { bearer: access }, { status: 200, json: { sub: 'alice-1', name: 'Alice Example' } }],
      ['/connect/userinfo', { bearer: 'not-a-token' }, { status: 401, json: { error: 'invalid_token' }, challenge: expect.stringMatching(/^Bearer realm=".*", error="invalid_token"$/) }],
      ['/connect/revocation', post({ client_id: 'spa-user', token: access }), { status: 200 }],
      ['/connect/revocation', post({ client_id: 'spa-user' }), { status: 400, json: { error: 'invalid_request' } }],
      ['/connect/deviceauthorization', post({ client_id: 'spa-user', scope: 'openid' }), { status: 200, json: { user_code: expect.any(String) } }],
      ['/connect/deviceauthorization', post({ client_id: 'spa-user', scope: 'orders.read' }), { status: 400, json: { error: 'invalid_scope' } }],
    ]
    for (const [path, init, expected] of cases) {
      expect(await call(path, init, unlisted), `${path} from the unlisted origin`).toEqual(REFUSED)
      expect(await call(path, init), path).toMatchObject(expected)
    }
    expect(await call('/connect/token', password, unlisted)).toEqual(REFUSED)
  })
})
