// A single-page app registers itself from its own origin in a real browser (RFC 7591 §3, RFC 7592
// §2): fetch with a JSON body and then with its registration access token as Bearer (both
// preflighted), reading the answers, the 401 challenge of a missing token, and deleting itself.
// No client lists the page's origin: registration is open to any origin, without cookies.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'

warnIfNoChromium('the registration browser test')

let testApp: TestApp
let site: Server
let browser: Browser
let page: Page
let authz: string
let appOrigin: string
beforeAll(async () => {
  if (!haveChromium) return
  testApp = await createTestApp({ env: { REGISTRATION: 'open', REGISTRATION_ALLOWED_SCOPES: 'openid profile offline_access' } })
  await testApp.app.listen({ port: 0, host: '127.0.0.1' })
  authz = `http://127.0.0.1:${(testApp.app.server.address() as AddressInfo).port}`
  site = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>agent</title>'))
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r))
  appOrigin = `http://localhost:${(site.address() as AddressInfo).port}`
  browser = await launchChromium()
  page = await browser.newPage()
  await page.goto(appOrigin)
})
afterAll(async () => {
  await browser?.close()
  await new Promise((r) => (site ? site.close(r) : r(undefined)))
  await testApp?.close()
})

/** fetch from the app's page; a CORS refusal surfaces as the TypeError fetch throws. */
function call(path: string, init: { method: string; bearer?: string; json?: unknown }) {
  return page.evaluate(
    async ({ url, method, bearer, json }) => {
      try {
        const headers: Record<string, string> = {}
        if (bearer) headers.authorization = `Bearer ${bearer}`
        if (json !== undefined) headers['content-type'] = 'application/json'
        const res = await fetch(url, { method, headers, ...(json !== undefined ? { body: JSON.stringify(json) } : {}) })
        const text = await res.text()
        return {
          status: res.status,
          json: text ? (JSON.parse(text) as Record<string, unknown>) : null,
          challenge: res.headers.get('www-authenticate'),
        }
      } catch (err) {
        return { refused: String(err) }
      }
    },
    { url: `${authz}${path}`, method: init.method, bearer: init.bearer, json: init.json },
  )
}

describe.skipIf(!haveChromium)('a browser app registering itself', () => {
  it('registers, reads, updates and deletes its registration with fetch, and reads the challenge of a missing token', async () => {
    const metadata = {
      client_name: 'Browser agent',
      redirect_uris: ['https://agent.example/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'none',
      scope: 'openid offline_access',
    }
    const created = await call('/connect/register', { method: 'POST', json: metadata })
    expect(created).toMatchObject({ status: 201, json: { client_name: 'Browser agent', token_endpoint_auth_method: 'none' } })
    const c = (created as { json: Record<string, string> }).json
    const path = new URL(c.registration_client_uri!).pathname

    const read = await call(path, { method: 'GET', bearer: c.registration_access_token })
    expect(read).toMatchObject({ status: 200, json: { client_id: c.client_id } })

    const noToken = await call(path, { method: 'GET' })
    expect(noToken).toMatchObject({ status: 401, challenge: expect.stringMatching(/^Bearer realm=/) })

    const updated = await call(path, {
      method: 'PUT',
      bearer: c.registration_access_token,
      json: { ...metadata, client_id: c.client_id, client_name: 'Browser agent 2' },
    })
    expect(updated).toMatchObject({ status: 200, json: { client_name: 'Browser agent 2' } })

    const rotated = (updated as { json: Record<string, string> }).json.registration_access_token
    expect(await call(path, { method: 'DELETE', bearer: rotated })).toEqual({ status: 204, json: null, challenge: null })
    const gone = await testApp.db.query('SELECT count(*)::int AS n FROM clients WHERE client_id = $1', [c.client_id])
    expect(gone.rows[0]).toEqual({ n: 0 })
  })
})
