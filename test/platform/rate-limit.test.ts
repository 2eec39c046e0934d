// Per-address request rate limits (RFC 6585 §4): OAuth JSON at the API endpoints, an HTML page
// on the sign-in POST; other addresses unaffected; 0 turns a limit off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PAGE_HEADERS } from '../../src/pages/html.js'
import { basic, createTestApp, form, FORM, type TestApp } from '../helpers/app.js'
import { CC, seedTokens } from '../flows/token/token-fixtures.js'

let authz: TestApp
let off: TestApp
beforeAll(async () => {
  authz = await createTestApp({ env: { RATE_LIMIT_API: '3', RATE_LIMIT_SIGN_IN: '2' } })
  off = await createTestApp({ env: { RATE_LIMIT_API: '0', RATE_LIMIT_SIGN_IN: '0' }, testDb: authz.testDb })
  await seedTokens(authz)
})
afterAll(async () => {
  await off?.close()
  await authz?.close()
})

const ENDPOINTS = ['/connect/token', '/connect/introspect', '/connect/revocation', '/connect/ciba']
const call = (app: TestApp, url: string, address: string) =>
  app.app.inject({
    method: 'POST',
    url,
    remoteAddress: address,
    headers: { ...FORM, authorization: basic('backend', 's3cret') },
    payload: form({ grant_type: CC, token: 'x' }),
  })

describe('request rate limits', () => {
  it.each(ENDPOINTS)('%s answers 429 temporarily_unavailable with Retry-After past the limit, per address', async (url) => {
    const address = `192.0.2.${ENDPOINTS.indexOf(url) + 1}`
    for (let i = 0; i < 3; i++) expect((await call(authz, url, address)).statusCode).not.toBe(429)
    const res = await call(authz, url, address)
    expect(res.statusCode).toBe(429)
    expect(res.json()).toEqual({ error: 'temporarily_unavailable', error_description: 'too many requests from this address, retry later' })
    expect(res.headers['retry-after']).toMatch(/^[1-9][0-9]*$/)
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers.pragma).toBe('no-cache')
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect((await call(authz, url, '198.51.100.99')).statusCode).not.toBe(429)
  })

  // The attack: one subscriber holds a whole IPv6 /64 and sends each request from a new
  // address in it; limited per exact address, every address would start with a fresh allowance.
  it.each(ENDPOINTS)('%s counts an IPv6 /64 as one address: rotating through it buys no fresh allowance', async (url) => {
    const subnet = `2001:db8:${ENDPOINTS.indexOf(url) + 10}:7`
    for (let i = 0; i < 3; i++) expect((await call(authz, url, `${subnet}:${i + 1}::${i + 42}`)).statusCode).not.toBe(429)
    const res = await call(authz, url, `${subnet}:ffff:ffff:ffff:fffe`)
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 429,
      body: { error: 'temporarily_unavailable', error_description: 'too many requests from this address, retry later' },
    })
    expect(res.headers['retry-after']).toMatch(/^[1-9][0-9]*$/)
    expect((await call(authz, url, `2001:db8:${ENDPOINTS.indexOf(url) + 10}:8::1`)).statusCode).not.toBe(429) // the next /64
  })

  it('answers successful requests without rate-limit headers', async () => {
    const res = await call(authz, '/connect/token', '192.0.2.50')
    expect(res.statusCode).toBe(200)
    expect(Object.keys(res.headers).filter((h) => h.startsWith('x-ratelimit') || h === 'retry-after')).toEqual([])
  })

  it('limits the sign-in POST with an HTML page', async () => {
    const signIn = () =>
      authz.app.inject({
        method: 'POST',
        url: '/account/sign-in?return_to=%2Fciba%2Fapprove%3Frequest%3Dnope',
        remoteAddress: '192.0.2.60',
        headers: FORM,
        payload: form({ username: 'a', password: 'b' }),
      })
    for (let i = 0; i < 2; i++) expect((await signIn()).statusCode).not.toBe(429)
    const res = await signIn()
    expect(res.statusCode).toBe(429)
    expect(res.headers).toMatchObject({ ...PAGE_HEADERS, 'retry-after': expect.stringMatching(/^[1-9][0-9]*$/) })
    expect(res.body).toContain('<h1>Too many attempts</h1>')
    expect(res.body).toContain('There were too many attempts from your network. Please wait a minute and try again.')
  })

  // The same attack on the pages a person posts to: a fresh allowance of password or user code
  // guesses for every address of the /64.
  it.each([
    ['POST', '/account/sign-in', '2001:db8:60'],
    ['GET', '/device?user_code=WDJB-MJHT', '2001:db8:61'],
  ] as const)('%s %s counts an IPv6 /64 as one address: rotating through it buys no fresh guesses', async (method, url, prefix) => {
    const send = (address: string) =>
      authz.app.inject({
        method,
        url,
        remoteAddress: address,
        headers: FORM,
        ...(method === 'POST' ? { payload: form({ username: 'a', password: 'b' }) } : {}),
      })
    expect((await send(`${prefix}:1::1`)).statusCode).not.toBe(429)
    expect((await send(`${prefix}:1:abcd::2`)).statusCode).not.toBe(429)
    const res = await send(`${prefix}:1:ffff:ffff:ffff:fffe`)
    expect(res.statusCode).toBe(429)
    expect(res.headers).toMatchObject({ ...PAGE_HEADERS, 'retry-after': expect.stringMatching(/^[1-9][0-9]*$/) })
    expect(res.body).toContain('<h1>Too many attempts</h1>')
    expect((await send(`${prefix}:2::1`)).statusCode).not.toBe(429) // the next /64
  })

  it('0 turns the limits off', async () => {
    for (let i = 0; i < 10; i++) expect((await call(off, '/connect/token', '192.0.2.70')).statusCode).toBe(200)
    for (let i = 0; i < 5; i++) {
      const res = await off.app.inject({ method: 'POST', url: '/account/sign-in', remoteAddress: '192.0.2.70', headers: FORM, payload: '' })
      expect(res.statusCode).not.toBe(429)
    }
  })
})
