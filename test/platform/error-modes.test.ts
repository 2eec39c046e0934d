// Error modes chosen by the route (src/http/error-handler.ts): OAuth JSON for API endpoints, an
// HTML page for page routes (errors Fastify raises itself included), and for the authorization
// endpoint a redirect with error, error_description, state and iss to a redirect URI the route
// has validated, else the error page. Test-only routes stand in for the endpoints to come.
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OAuthError } from '../../src/errors.js'
import { setErrorRedirect } from '../../src/http/error-handler.js'
import { PAGE_HEADERS } from '../../src/pages/html.js'
import { FORM } from '../helpers/app.js'
import { createCibaTestApp, TEST_ISSUER, type CibaTestApp } from '../flows/ciba/harness.js'

const REGISTERED = 'https://client.example/cb?x=1'

async function testRoutes(app: FastifyInstance) {
  const invalid = () => new OAuthError('invalid_request', 'parameter x is invalid')
  app.get('/test/api', async () => {
    throw invalid()
  })
  app.get('/test/page', { config: { errorMode: 'page' } }, async () => {
    throw invalid()
  })
  app.get('/test/page-crash', { config: { errorMode: 'page' } }, async () => {
    throw new Error('boom: secret detail')
  })
  // Stands in for the authorization endpoint: it trusts redirect_uri only when it is registered.
  app.get('/test/authorize', { config: { errorMode: 'redirect' } }, async (req) => {
    const q = req.query as Record<string, string>
    if (q.redirect_uri === REGISTERED) setErrorRedirect(req, { redirectUri: q.redirect_uri, state: q.state })
    if (q.crash) throw new Error('boom: secret detail')
    throw new OAuthError('access_denied', 'the user denied the request')
  })
}

let authz: CibaTestApp
beforeAll(async () => {
  authz = await createCibaTestApp({ beforeReady: testRoutes })
})
afterAll(() => authz?.close())

const get = (url: string) => authz.app.inject({ method: 'GET', url })

describe('error modes', () => {
  it('API routes (the default) answer OAuth JSON', async () => {
    const res = await get('/test/api')
    expect(res.statusCode).toBe(400)
    expect(res.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      pragma: 'no-cache',
    })
    expect(res.json()).toEqual({ error: 'invalid_request', error_description: 'parameter x is invalid' })
  })

  it('page routes answer an HTML page with the status and a human sentence', async () => {
    const res = await get('/test/page')
    expect(res.statusCode).toBe(400)
    expect(res.headers).toMatchObject(PAGE_HEADERS)
    expect(res.body).toContain('<h1>This request is not valid</h1>')
    expect(res.body).toContain('<p>Details: parameter x is invalid.</p>')
  })

  it('an unexpected failure on a page is a 500 page that tells nothing of the cause, which is logged', async () => {
    const res = await get('/test/page-crash')
    expect(res.statusCode).toBe(500)
    expect(res.headers).toMatchObject(PAGE_HEADERS)
    expect(res.body).toContain('<h1>Something went wrong</h1>')
    expect(res.body).not.toContain('boom')
    expect(authz.logs.some((l) => l.includes('boom: secret detail') && l.includes('request failed'))).toBe(true)
  })

  it('errors Fastify raises itself on a page route are pages too', async () => {
    const json = await authz.app.inject({
      method: 'POST',
      url: '/account/sign-in',
      headers: { 'content-type': 'application/json' },
      payload: '{"username":"a"}',
    })
    expect(json.statusCode).toBe(400)
    expect(json.headers).toMatchObject(PAGE_HEADERS)
    expect(json.body).toContain('Details: the request body must be application/x-www-form-urlencoded.')
    const text = await authz.app.inject({
      method: 'POST',
      url: '/account/sign-in',
      headers: { 'content-type': 'application/xml' },
      payload: '<x/>',
    })
    expect(text.statusCode).toBe(400)
    expect(text.headers).toMatchObject(PAGE_HEADERS)
    expect(text.body).toContain('Details: unsupported content type: use application/x-www-form-urlencoded.')
    const huge = await authz.app.inject({
      method: 'POST',
      url: '/account/sign-in',
      headers: FORM,
      payload: `username=${'a'.repeat(70 * 1024)}`,
    })
    expect(huge.statusCode).toBe(400)
    expect(huge.headers).toMatchObject(PAGE_HEADERS)
    expect(huge.body).toContain('Details: request body too large.')
    const repeated = await authz.app.inject({ method: 'POST', url: '/account/sign-in', headers: FORM, payload: 'csrf=a&csrf=b' })
    expect(repeated.statusCode).toBe(400)
    expect(repeated.body).toContain('Details: parameter csrf is repeated.')
  })

  it('redirect mode sends the error to the validated redirect URI with error, error_description, state and iss', async () => {
    const res = await get(`/test/authorize?redirect_uri=${encodeURIComponent(REGISTERED)}&state=s%20%26%3D1`)
    expect(res.statusCode).toBe(303)
    expect(res.headers['cache-control']).toBe('no-store')
    const location = new URL(res.headers.location!)
    expect(`${location.origin}${location.pathname}`).toBe('https://client.example/cb')
    expect([...location.searchParams]).toEqual([
      ['x', '1'],
      ['error', 'access_denied'],
      ['error_description', 'the user denied the request'],
      ['state', 's &=1'],
      ['iss', TEST_ISSUER],
    ])
  })

  it('redirect mode sends server_error without a description or its cause', async () => {
    const res = await get(`/test/authorize?redirect_uri=${encodeURIComponent(REGISTERED)}&crash=1`)
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`https://client.example/cb?x=1&error=server_error&iss=${encodeURIComponent(TEST_ISSUER)}`)
  })

  it('redirect mode shows the error page when no redirect URI was validated', async () => {
    const res = await get(`/test/authorize?redirect_uri=${encodeURIComponent('https://evil.example/cb')}&state=s`)
    expect(res.statusCode).toBe(400)
    expect(res.headers.location).toBeUndefined()
    expect(res.headers).toMatchObject(PAGE_HEADERS)
    expect(res.body).toContain('<h1>Access denied</h1>')
    expect(res.body).not.toContain('evil.example')
  })
})
