// CORS in a real browser: a page served from its own origin discovers us and calls the token
// and revocation endpoints with fetch (a preflighted request: it sends Authorization). It reads
// its answers and its errors; the same page using a client that does not list its origin reads
// nothing (the browser refuses the answer).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../src/seed/apply.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'

warnIfNoChromium('the CORS browser test')

let t: TestApp
let site: Server
let browser: Browser
let page: Page
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
    ],
  })
  browser = await launchChromium()
  page = await browser.newPage()
  await page.goto(appOrigin)
})
afterAll(async () => {
  await browser?.close()
  await new Promise((r) => (site ? site.close(r) : r(undefined)))
  await t?.close()
})

/** fetch from the app's page; a CORS refusal surfaces as the TypeError fetch throws. */
function call(path: string, init: { method?: string; client?: [string, string]; body?: Record<string, string> }) {
  return page.evaluate(
    async ({ url, method, client, body }) => {
      try {
        const headers: Record<string, string> = {}
        if (client) headers.authorization = `Basic ${btoa(`${client[0]}:${client[1]}`)}`
        const res = await fetch(url, { method, headers, ...(body ? { body: new URLSearchParams(body) } : {}) })
        return { status: res.status, json: await res.json().catch(() => null), challenge: res.headers.get('www-authenticate') }
      } catch (err) {
        return { refused: String(err) }
      }
    },
    { url: `${authz}${path}`, method: init.method ?? 'GET', client: init.client, body: init.body },
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
