import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BODY_LIMIT } from '../../src/app.js'
import { createTestApp, type TestApp } from '../helpers/app.js'

let authz: TestApp
beforeAll(async () => {
  authz = await createTestApp()
})
afterAll(() => authz.close())

describe('HTTP foundation', () => {
  it('answers liveness and readiness', async () => {
    const live = await authz.app.inject({ method: 'GET', url: '/health/live' })
    expect(live.statusCode).toBe(200)
    expect(live.json()).toEqual({ status: 'live' })
    const ready = await authz.app.inject({ method: 'GET', url: '/health/ready' })
    expect(ready.statusCode).toBe(200)
    expect(ready.json()).toEqual({ status: 'ready' })
    expect(ready.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('answers unknown routes with a JSON 404 in the OAuth error shape', async () => {
    const res = await authz.app.inject({ method: 'GET', url: '/nope?x=1' })
    expect(res.statusCode).toBe(404)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers.pragma).toBe('no-cache')
    expect(res.json()).toEqual({ error: 'not_found', error_description: 'no endpoint at this path for this method' })
  })

  it('echoes a caller-supplied request id', async () => {
    const res = await authz.app.inject({ method: 'GET', url: '/health/live', headers: { 'x-request-id': 'abc-123' } })
    expect(res.headers['x-request-id']).toBe('abc-123')
  })

  it('refuses a body over the limit with invalid_request, not a 500', async () => {
    const res = await authz.app.inject({
      method: 'POST',
      url: '/health/live',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `a=${'x'.repeat(BODY_LIMIT)}`,
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ error: 'invalid_request', error_description: 'request body too large' })
  })
})
