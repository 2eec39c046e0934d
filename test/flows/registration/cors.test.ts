// A browser app (a single-page MCP client) registers and manages itself (RFC 7591 §3, RFC 7592
// §2) from any origin: preflights and real answers carry the CORS headers it needs, with no
// credentials mode (access is by the Bearer the request carries). Discovery's CORS is unchanged,
// and the token endpoint still answers only the origins its clients list.
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../../helpers/app.js'
import { bearer, createRegistrationTestApp, JSON_TYPE, pathOf, PUBLIC_CLIENT } from './harness.js'

const SPA = 'https://mcp-client.example'
const ELSEWHERE = 'https://another-app.example:8443'

let authz: TestApp
beforeAll(async () => {
  authz = await createRegistrationTestApp()
}, 120_000)
afterAll(async () => authz.close())

const preflight = (url: string, origin: string, method: string) =>
  authz.app.inject({
    method: 'OPTIONS',
    url,
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type' },
  })

const call = (method: 'POST' | 'GET' | 'PUT' | 'DELETE', url: string, origin: string, headers: Record<string, string>, body?: unknown) =>
  authz.app.inject({
    method,
    url,
    headers: { origin, ...headers, ...(body === undefined ? {} : JSON_TYPE) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  })

const cors = (res: LightMyRequestResponse) => ({
  status: res.statusCode,
  allowOrigin: res.headers['access-control-allow-origin'],
  allowCredentials: res.headers['access-control-allow-credentials'],
  expose: res.headers['access-control-expose-headers'],
  vary: res.headers.vary,
})

const headerList = (v: string | string[] | number | undefined) =>
  String(v ?? '')
    .toLowerCase()
    .split(/\s*,\s*/)
    .sort()

describe('registration endpoint from a browser', () => {
  it('answers a preflight for POST from any https origin and an opaque one (null), allowing Authorization and Content-Type', async () => {
    for (const origin of [SPA, ELSEWHERE, 'null']) {
      const res = await preflight('/connect/register', origin, 'POST')
      expect(res.statusCode, origin).toBe(204)
      expect(res.headers['access-control-allow-origin'], origin).toBe('*')
      expect(res.headers['access-control-allow-methods'], origin).toBe('POST')
      expect(headerList(res.headers['access-control-allow-headers']), origin).toEqual(
        expect.arrayContaining(['authorization', 'content-type']),
      )
      expect(res.headers['access-control-max-age'], origin).toBe('600')
      expect(res.headers['access-control-allow-credentials'], origin).toBeUndefined()
    }
  })

  it('lets the page read its registration, then read, update and delete it at the client configuration URI', async () => {
    const created = await call('POST', '/connect/register', SPA, {}, PUBLIC_CLIENT)
    expect(cors(created)).toEqual({
      status: 201,
      allowOrigin: '*',
      allowCredentials: undefined,
      expose: 'WWW-Authenticate, Retry-After, DPoP-Nonce',
      vary: 'Origin',
    })
    const c = created.json()
    const path = pathOf(c.registration_client_uri)

    const pre = await preflight(path, SPA, 'PUT')
    expect(pre.statusCode).toBe(204)
    expect(pre.headers['access-control-allow-origin']).toBe('*')
    expect(pre.headers['access-control-allow-methods']).toBe('GET, PUT, DELETE')
    expect(headerList(pre.headers['access-control-allow-headers'])).toEqual(expect.arrayContaining(['authorization', 'content-type']))

    const read = await call('GET', path, SPA, bearer(c.registration_access_token))
    expect(cors(read)).toMatchObject({ status: 200, allowOrigin: '*', allowCredentials: undefined })
    expect(read.json().client_id).toBe(c.client_id)

    const update = { ...PUBLIC_CLIENT, client_id: c.client_id, client_name: 'Assistant 2' }
    const updated = await call('PUT', path, SPA, bearer(c.registration_access_token), update)
    expect(cors(updated)).toMatchObject({ status: 200, allowOrigin: '*', allowCredentials: undefined })
    expect(updated.json().client_name).toBe('Assistant 2')

    const deleted = await call('DELETE', path, SPA, bearer(updated.json().registration_access_token))
    expect(cors(deleted)).toMatchObject({ status: 204, allowOrigin: '*', allowCredentials: undefined })
  })

  it('lets the page read a refusal and its challenge: no token, a wrong token, bad metadata', async () => {
    const c = (await call('POST', '/connect/register', SPA, {}, PUBLIC_CLIENT)).json()
    const path = pathOf(c.registration_client_uri)
    const none = await call('GET', path, SPA, {})
    expect(cors(none)).toMatchObject({ status: 401, allowOrigin: '*', expose: 'WWW-Authenticate, Retry-After, DPoP-Nonce' })
    expect(none.headers['www-authenticate']).toBe('Bearer realm="https://authz.test"')
    const wrong = await call('GET', path, SPA, bearer('not-the-token'))
    expect(cors(wrong)).toMatchObject({ status: 401, allowOrigin: '*' })
    expect(wrong.json().error).toBe('invalid_token')
    const bad = await call('POST', '/connect/register', SPA, {}, { ...PUBLIC_CLIENT, grant_types: ['password'] })
    expect(cors(bad)).toMatchObject({ status: 400, allowOrigin: '*' })
    expect(bad.json().error).toBe('invalid_client_metadata')
  })

  it('answers no preflight for a path below the configuration URI that is no route', async () => {
    const res = await preflight('/connect/register/some-client/extra', SPA, 'GET')
    expect(res.statusCode).toBe(404)
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
  })
})

describe('the other endpoints are unchanged', () => {
  it('discovery: readable from any origin, preflight for GET only, and it still names the registration endpoint', async () => {
    const doc = await authz.app.inject({ url: '/.well-known/openid-configuration', headers: { origin: SPA } })
    expect(doc.statusCode).toBe(200)
    expect(doc.headers['access-control-allow-origin']).toBe('*')
    expect(doc.json().registration_endpoint).toBe('https://authz.test/connect/register')
    const pre = await preflight('/.well-known/openid-configuration', SPA, 'GET')
    expect(pre.statusCode).toBe(204)
    expect(pre.headers['access-control-allow-methods']).toBe('GET')
  })

  it('token endpoint: no preflight for an origin no client lists', async () => {
    const res = await preflight('/connect/token', ELSEWHERE, 'POST')
    expect(res.statusCode).toBe(404)
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
  })
})
