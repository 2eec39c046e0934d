// PAR_REQUIRED=true: every client's authorization requests must be pushed (RFC 9126 §5), and
// discovery says so.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { TEST_ISSUER } from '../../helpers/app.js'
import { authorizeUrl, located, session, WEB_CB } from '../authorization-code/harness.js'
import { createParTestApp, type ParTestApp } from './harness.js'

let t: ParTestApp
beforeAll(async () => {
  t = await createParTestApp({ PAR_REQUIRED: 'true' })
})
afterAll(() => t?.close())

it('refuses a direct request back at the redirect URI, takes a pushed one, and says so in discovery', async () => {
  const cookie = await session(t)
  const direct = await t.app.inject({ method: 'GET', url: authorizeUrl(), headers: { cookie } })
  expect(direct.statusCode).toBe(303)
  const back = located(direct)
  expect(`${back.origin}${back.pathname}`).toBe(WEB_CB)
  expect(Object.fromEntries(back.searchParams)).toEqual({
    error: 'invalid_request',
    error_description: 'pushed authorization requests are required: use the pushed authorization request endpoint',
    state: 'st-1',
    iss: TEST_ISSUER,
  })
  const doc = (await t.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json<Record<string, unknown>>()
  expect(doc.require_pushed_authorization_requests).toBe(true)
})
