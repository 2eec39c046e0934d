// CORS for browser-based clients (Fetch Standard §3.2): discovery and JWKS from any origin; the
// token and revocation endpoints only for the origins the client of the request lists
// (allowedCorsOrigins), errors included; nothing for anyone else, and never for introspection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed, validateSeed } from '../../src/seed/apply.js'
import { basic, createTestApp, form, FORM, type TestApp } from '../helpers/app.js'

const SPA = 'https://spa.example'
const OTHER_APP = 'https://other-app.example:8443'
const NOBODY = 'https://evil.example'
const CC = 'client_credentials'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
  await applySeed(t.db, {
    apiScopes: [{ name: 'orders.read' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read'], secrets: [{ value: 'orders-secret' }] }],
    clients: [
      { clientId: 'spa', secrets: [{ value: 'spa-secret' }], allowedGrantTypes: [CC], allowedScopes: ['orders.read'], allowedCorsOrigins: [SPA] },
      { clientId: 'other-app', secrets: [{ value: 'other-secret' }], allowedGrantTypes: [CC], allowedScopes: ['orders.read'], allowedCorsOrigins: [OTHER_APP] },
      { clientId: 'gone', secrets: [{ value: 'gone-secret' }], allowedGrantTypes: [CC], allowedScopes: ['orders.read'], allowedCorsOrigins: ['https://gone.example'], enabled: false },
    ],
  })
})
afterAll(() => t.close())

const preflight = (url: string, origin: string, extra: Record<string, string> = {}) =>
  t.app.inject({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type', ...extra } })
const tokenFrom = (origin: string | undefined, id: string, secret: string, params: Record<string, string> = { grant_type: CC }) =>
  t.app.inject({
    method: 'POST', url: '/connect/token',
    headers: { ...FORM, authorization: basic(id, secret), ...(origin ? { origin } : {}) },
    payload: form(params),
  })
const vary = (h: Record<string, unknown>) => String(h.vary ?? '').toLowerCase().split(/\s*,\s*/)

describe('discovery and JWKS: readable from any origin', () => {
  for (const url of ['/.well-known/openid-configuration', '/.well-known/openid-configuration/jwks']) {
    it(`GET ${url}`, async () => {
      const res = await t.app.inject({ url, headers: { origin: NOBODY } })
      expect(res.statusCode).toBe(200)
      expect(res.headers['access-control-allow-origin']).toBe('*')
      expect(res.headers['access-control-allow-credentials']).toBeUndefined()
    })
    it(`preflight for ${url}`, async () => {
      const res = await preflight(url, NOBODY, { 'access-control-request-method': 'GET' })
      expect(res.statusCode).toBe(204)
      expect(res.headers['access-control-allow-origin']).toBe('*')
      expect(res.headers['access-control-allow-methods']).toBe('GET')
    })
  }
})

describe('token endpoint', () => {
  it('answers a preflight from an origin some client lists', async () => {
    const res = await preflight('/connect/token', SPA)
    expect(res.statusCode).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe(SPA)
    expect(res.headers['access-control-allow-methods']).toBe('POST')
    expect(res.headers['access-control-allow-headers']).toBe('Authorization, Content-Type')
    expect(res.headers['access-control-max-age']).toBe('600')
    expect(vary(res.headers)).toContain('origin')
    expect(res.headers['access-control-allow-credentials']).toBeUndefined()
  })

  it('answers no preflight from an origin no client lists, or only a disabled one', async () => {
    for (const origin of [NOBODY, 'https://gone.example']) {
      const res = await preflight('/connect/token', origin)
      expect(res.headers['access-control-allow-origin']).toBeUndefined()
      expect(res.statusCode).toBeLessThan(500)
    }
  })

  it("lets the client's own origin read its tokens", async () => {
    const res = await tokenFrom(SPA, 'spa', 'spa-secret')
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBe(SPA)
    expect(res.headers['access-control-expose-headers']).toBe('WWW-Authenticate, Retry-After')
    expect(vary(res.headers)).toContain('origin')
  })

  it('names the client of the request from client_id in the form too (public and post clients)', async () => {
    const res = await t.app.inject({
      method: 'POST', url: '/connect/token', headers: { ...FORM, origin: SPA },
      payload: form({ grant_type: CC, client_id: 'spa', client_secret: 'spa-secret' }),
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBe(SPA)
  })

  it("lets the client's own origin read its errors: invalid_client with its challenge, unsupported_grant_type", async () => {
    const wrong = await tokenFrom(SPA, 'spa', 'not-the-secret')
    expect(wrong.statusCode).toBe(401)
    expect(wrong.json().error).toBe('invalid_client')
    expect(wrong.headers['access-control-allow-origin']).toBe(SPA)
    expect(wrong.headers['www-authenticate']).toMatch(/^Basic /)
    const grant = await tokenFrom(SPA, 'spa', 'spa-secret', { grant_type: 'password', username: 'x', password: 'y' })
    expect(grant.statusCode).toBe(400)
    expect(grant.headers['access-control-allow-origin']).toBe(SPA)
  })

  it("gives another client's origin nothing, even though that origin is listed (by someone else)", async () => {
    const res = await tokenFrom(OTHER_APP, 'spa', 'spa-secret')
    expect(res.statusCode).toBe(200) // the server answers; the browser keeps the answer from that page
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
    const mine = await tokenFrom(OTHER_APP, 'other-app', 'other-secret')
    expect(mine.headers['access-control-allow-origin']).toBe(OTHER_APP)
  })

  it('gives a disabled client or an unknown one nothing', async () => {
    expect((await tokenFrom('https://gone.example', 'gone', 'gone-secret')).headers['access-control-allow-origin']).toBeUndefined()
    expect((await tokenFrom(SPA, 'nobody', 'x')).headers['access-control-allow-origin']).toBeUndefined()
  })

  it('sends no CORS headers without an Origin (server-side clients)', async () => {
    const res = await tokenFrom(undefined, 'spa', 'spa-secret')
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('ignores a malformed Origin: no CORS headers, never a 5xx', async () => {
    for (const origin of ['null', `${SPA}/`, `${SPA}/path`, 'HTTPS://SPA.EXAMPLE', 'https://spa.example:443', 'spa.example', 'https://', 'https://spa.example:99999', 'javascript:alert(1)', 'x'.repeat(5000)]) {
      const res = await tokenFrom(origin, 'spa', 'spa-secret')
      expect(res.statusCode, origin).toBe(200)
      expect(res.headers['access-control-allow-origin'], origin).toBeUndefined()
      const pre = await preflight('/connect/token', origin)
      expect(pre.statusCode, origin).toBeLessThan(500)
      expect(pre.headers['access-control-allow-origin'], origin).toBeUndefined()
    }
  })
})

describe('revocation endpoint', () => {
  it("answers the client's own origin, and nobody else's", async () => {
    const access = (await tokenFrom(undefined, 'spa', 'spa-secret')).json().access_token as string
    expect((await preflight('/connect/revocation', SPA)).headers['access-control-allow-origin']).toBe(SPA)
    const revoke = (origin: string) =>
      t.app.inject({ method: 'POST', url: '/connect/revocation', headers: { ...FORM, origin, authorization: basic('spa', 'spa-secret') }, payload: form({ token: access }) })
    const mine = await revoke(SPA)
    expect(mine.statusCode).toBe(200)
    expect(mine.headers['access-control-allow-origin']).toBe(SPA)
    expect((await revoke(NOBODY)).headers['access-control-allow-origin']).toBeUndefined()
  })
})

describe('introspection is for APIs, not browsers', () => {
  it('answers no preflight and sends no CORS headers, whatever the origin', async () => {
    expect((await preflight('/connect/introspect', SPA)).headers['access-control-allow-origin']).toBeUndefined()
    const res = await t.app.inject({
      method: 'POST', url: '/connect/introspect', headers: { ...FORM, origin: SPA, authorization: basic('orders-api', 'orders-secret') }, payload: form({ token: 'x' }),
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
  })
})

describe('seed: allowedCorsOrigins', () => {
  it('accepts origins and names the client and the entry of anything else', () => {
    expect(validateSeed({ clients: [{ clientId: 'a', allowedCorsOrigins: ['https://a.example', 'http://localhost:3000'] }] }).clients[0]?.allowedCorsOrigins)
      .toEqual(['https://a.example', 'http://localhost:3000'])
    for (const bad of ['https://a.example/', 'https://a.example/app', 'https://A.example', 'ftp://a.example', '*', 'a.example', 'https://a.example:443']) {
      expect(() => validateSeed({ clients: [{ clientId: 'web-app', allowedCorsOrigins: ['https://ok.example', bad] }] }), bad)
        .toThrow(`clients[0].allowedCorsOrigins[1]: client web-app: ${JSON.stringify(bad)} is not an origin`)
    }
  })
})
