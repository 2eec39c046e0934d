// CORS in a real browser: a page served from its own origin discovers us and calls the token
// and revocation endpoints with fetch (a preflighted request: it sends Authorization). It reads
// its answers and its errors; the same page using a client that does not list its origin reads
// nothing (the browser refuses the answer). Then every endpoint a browser app calls, from the
// app's page and from a page on an origin no client lists: discovery (both documents), JWKS,
// token, userinfo (its challenge read through Access-Control-Expose-Headers), revocation and
// device authorization. The public documents from an opaque origin (a sandboxed iframe: Origin:
// null) too. Last, answers made before the client is known: a body too large, and the rate
// limit's 429 with its Retry-After (exposed).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Frame, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../src/seed/apply.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'

warnIfNoChromium('the CORS browser test')

const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code'
const RATE_LIMIT = 50

let testApp: TestApp
let site: Server
let browser: Browser
let page: Page
let unlisted: Page
let authz: string
beforeAll(async () => {
  if (!haveChromium) return
  // A limit the other tests stay far below; the last test goes over it on purpose.
  testApp = await createTestApp({ env: { RATE_LIMIT_API: String(RATE_LIMIT) } })
  await testApp.app.listen({ port: 0, host: '127.0.0.1' })
  authz = `http://127.0.0.1:${(testApp.app.server.address() as AddressInfo).port}`
  // The app's origin: another host name and port than ours.
  site = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'))
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r))
  const appOrigin = `http://localhost:${(site.address() as AddressInfo).port}`
  await applySeed(testApp.db, {
    apiScopes: [{ name: 'orders.read' }],
    clients: [
      {
        clientId: 'spa',
        secrets: [{ value: 'spa-secret' }],
        allowedGrantTypes: ['client_credentials'],
        allowedScopes: ['orders.read'],
        allowedCorsOrigins: [appOrigin],
      },
      {
        clientId: 'backend',
        secrets: [{ value: 'backend-secret' }],
        allowedGrantTypes: ['client_credentials'],
        allowedScopes: ['orders.read'],
      },
      {
        clientId: 'spa-user',
        requireClientSecret: false,
        allowedGrantTypes: ['password', DEVICE],
        allowedScopes: ['openid', 'profile'],
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
  await testApp?.close()
})

interface Init {
  method?: string
  client?: [string, string]
  bearer?: string
  body?: Record<string, string>
}

/** fetch from the app's page (or another); a CORS refusal surfaces as the TypeError fetch throws. */
function call(path: string, init: Init, from: Page | Frame = page) {
  return from.evaluate(
    async ({ url, method, client, bearer, body }) => {
      try {
        const headers: Record<string, string> = {}
        if (client) headers.authorization = `Basic ${btoa(`${client[0]}:${client[1]}`)}`
        if (bearer) headers.authorization = `Bearer ${bearer}`
        const res = await fetch(url, { method, headers, ...(body ? { body: new URLSearchParams(body) } : {}) })
        const read = { challenge: res.headers.get('www-authenticate'), retryAfter: res.headers.get('retry-after') }
        return { status: res.status, json: await res.json().catch(() => null), ...read }
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

    const token = await call('/connect/token', {
      method: 'POST',
      client: ['spa', 'spa-secret'],
      body: { grant_type: 'client_credentials' },
    })
    expect(token).toMatchObject({ status: 200, json: { token_type: 'Bearer' } })

    const wrong = await call('/connect/token', { method: 'POST', client: ['spa', 'wrong'], body: { grant_type: 'client_credentials' } })
    expect(wrong).toMatchObject({ status: 401, json: { error: 'invalid_client' }, challenge: expect.stringMatching(/^Basic /) })

    const access = (token as { json: { access_token: string } }).json.access_token
    expect(await call('/connect/revocation', { method: 'POST', client: ['spa', 'spa-secret'], body: { token: access } })).toMatchObject({
      status: 200,
    })

    const foreign = await call('/connect/token', {
      method: 'POST',
      client: ['backend', 'backend-secret'],
      body: { grant_type: 'client_credentials' },
    })
    expect(foreign).toEqual({ refused: expect.stringContaining('Failed to fetch') })
  })
})

describe.skipIf(!haveChromium)('every endpoint a browser app calls, from its page and from an unlisted origin', () => {
  const REFUSED = { refused: expect.stringContaining('Failed to fetch') }
  const post = (body: Record<string, string>): Init => ({ method: 'POST', body })

  it('discovery (both documents) and JWKS: readable from any origin, an opaque one (Origin: null) included', async () => {
    // A sandboxed iframe (no allow-same-origin) in the app's page has an opaque origin: its fetches say Origin: null.
    await page.evaluate(
      () =>
        new Promise((loaded) => {
          const frame = Object.assign(document.createElement('iframe'), {
            id: 'opaque',
            srcdoc: '<title>sandboxed</title>',
            onload: loaded,
          })
          frame.sandbox.add('allow-scripts')
          document.body.append(frame)
        }),
    )
    const opaque = page.frames().find((f) => f !== page.mainFrame())!
    for (const path of [
      '/.well-known/openid-configuration',
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration/jwks',
    ]) {
      for (const from of [page, unlisted, opaque])
        expect(await call(path, {}, from), path).toMatchObject({ status: 200, json: expect.any(Object) })
    }
    // Not the client endpoints: no client lists null.
    const token = { method: 'POST', body: { grant_type: 'password', client_id: 'spa-user', username: 'alice', password: 'alice-pw' } }
    expect(await call('/connect/token', token, opaque)).toEqual(REFUSED)
    await page.evaluate(() => document.getElementById('opaque')?.remove())
  })

  it('token, userinfo, revocation, device authorization: the app reads answers and errors; the unlisted origin nothing', async () => {
    const password = post({
      grant_type: 'password',
      client_id: 'spa-user',
      username: 'alice',
      password: 'alice-pw',
      scope: 'openid profile',
    })
    const token = await call('/connect/token', password)
    expect(token).toMatchObject({ status: 200, json: { token_type: 'Bearer', scope: 'openid profile' } })
    const access = (token as { json: { access_token: string } }).json.access_token
    const cases: [string, Init, { status: number; json?: unknown; challenge?: unknown }][] = [
      [
        '/connect/token',
        post({ grant_type: 'refresh_token', client_id: 'spa-user', refresh_token: 'not-a-token' }),
        { status: 400, json: { error: 'invalid_grant' } },
      ],
      ['/connect/userinfo', { bearer: access }, { status: 200, json: { sub: 'alice-1', name: 'Alice Example' } }],
      [
        '/connect/userinfo',
        { bearer: 'not-a-token' },
        { status: 401, json: { error: 'invalid_token' }, challenge: expect.stringMatching(/^Bearer realm=".*", error="invalid_token"$/) },
      ],
      ['/connect/revocation', post({ client_id: 'spa-user', token: access }), { status: 200 }],
      ['/connect/revocation', post({ client_id: 'spa-user' }), { status: 400, json: { error: 'invalid_request' } }],
      [
        '/connect/deviceauthorization',
        post({ client_id: 'spa-user', scope: 'openid' }),
        { status: 200, json: { user_code: expect.any(String) } },
      ],
      [
        '/connect/deviceauthorization',
        post({ client_id: 'spa-user', scope: 'orders.read' }),
        { status: 400, json: { error: 'invalid_scope' } },
      ],
    ]
    for (const [path, init, expected] of cases) {
      expect(await call(path, init, unlisted), `${path} from the unlisted origin`).toEqual(REFUSED)
      expect(await call(path, init), path).toMatchObject(expected)
    }
    expect(await call('/connect/token', password, unlisted)).toEqual(REFUSED)
  })
})

// Last in the file: it leaves this address (127.0.0.1: the page's and inject's) over the token
// endpoint's rate limit for a minute.
describe.skipIf(!haveChromium)('answers made before the client is known', () => {
  it("the app reads a body too large and the rate limit's 429 with its Retry-After; the unlisted origin nothing", async () => {
    const huge = { method: 'POST', body: { grant_type: 'client_credentials', client_id: 'spa-user', padding: 'x'.repeat(70 * 1024) } }
    expect(await call('/connect/token', huge)).toMatchObject({
      status: 400,
      json: { error: 'invalid_request', error_description: 'request body too large' },
    })
    expect(await call('/connect/token', huge, unlisted)).toEqual({ refused: expect.stringContaining('Failed to fetch') })

    // Over the limit from Node (inject's address is the page's), with requests refused at once.
    for (let i = 0; i < RATE_LIMIT; i++)
      await testApp.app.inject({ method: 'POST', url: '/connect/token', headers: { 'content-type': 'application/json' }, payload: '{' })
    const limited = await call('/connect/token', {
      method: 'POST',
      body: { grant_type: 'refresh_token', client_id: 'spa-user', refresh_token: 'x' },
    })
    expect(limited).toMatchObject({
      status: 429,
      json: { error: 'temporarily_unavailable' },
      retryAfter: expect.stringMatching(/^[1-9][0-9]*$/),
    })
    expect(
      await call(
        '/connect/token',
        { method: 'POST', body: { grant_type: 'refresh_token', client_id: 'spa-user', refresh_token: 'x' } },
        unlisted,
      ),
    ).toEqual({ refused: expect.stringContaining('Failed to fetch') })
  })
})
