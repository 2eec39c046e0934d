// A sign-in upstream that does not end well ends in no session: the person cancelling gives the app
// access_denied, an upstream error or an upstream that is down or does not answer in time (the
// timeout, here half a second) temporarily_unavailable (RFC 6749 §4.1.2.1), with state and iss;
// without an app to tell, a page below 500 names the provider. Each is an audit event and counted
// in authz_federated_signins_total by scheme and outcome.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseMetrics, series } from '../../observe/prometheus.js'
import { authorizeUrl, browser, createFederation, linkTo, located, UPSTREAM, WEB_CB, type Federation } from './harness.js'

let f: Federation
beforeAll(async () => {
  f = await createFederation({}, { METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' })
})
afterAll(() => f?.close())

const sessions = async () => Number((await f.authz.db.query<{ n: number }>('SELECT count(*)::int AS n FROM user_sessions')).rows[0]!.n)
const audits = () =>
  f.authz.logs
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.log === 'audit' && String(l.event).startsWith('federation.'))

/** Starts the corp sign-in for `web`; the upstream authorization URL (with our state). */
async function toUpstream(b: ReturnType<typeof browser>, button = 'Sign in with Corporate sign-in') {
  const page = await b.follow(authorizeUrl())
  return b.get(linkTo(page.body, button))
}

/** The upstream's answer to our callback, made up from the request it was sent (state, iss). */
const answer = (upstreamAuthorize: URL, params: Record<string, string>) =>
  `/federation/corp/signin?${new URLSearchParams({ ...params, state: upstreamAuthorize.searchParams.get('state')!, iss: UPSTREAM })}`

function appError(res: Awaited<ReturnType<ReturnType<typeof browser>['get']>>) {
  expect(res.statusCode).toBe(303)
  const url = located(res)
  expect(`${url.origin}${url.pathname}`).toBe(WEB_CB)
  return Object.fromEntries(url.searchParams)
}

describe('the app is told', () => {
  it('access_denied when the person cancels upstream', async () => {
    const b = browser(f)
    const before = await sessions()
    const res = await b.get(answer(located(await toUpstream(b)), { error: 'access_denied' }))
    expect(appError(res)).toEqual({
      error: 'access_denied',
      error_description: 'the user did not sign in at the identity provider',
      state: 'app-state',
      iss: 'https://authz.test',
    })
    expect(await sessions()).toBe(before)
  })

  it('temporarily_unavailable when the upstream answers an error the person did not cause', async () => {
    const b = browser(f)
    const res = await b.get(answer(located(await toUpstream(b)), { error: 'server_error' }))
    expect(appError(res)).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'the identity provider could not complete the sign-in',
      state: 'app-state',
      iss: 'https://authz.test',
    })
  })

  it('temporarily_unavailable when the upstream is down', async () => {
    const res = await toUpstream(browser(f), 'Sign in with Partner ID')
    expect(appError(res)).toMatchObject({ error: 'temporarily_unavailable', state: 'app-state' })
  })

  it('temporarily_unavailable when the upstream does not answer the token request in time, never a hang', async () => {
    const b = browser(f)
    const upstream = located(await toUpstream(b))
    f.hang.add('upstream.test')
    try {
      const started = Date.now()
      const res = await b.get(answer(upstream, { code: 'some-code' }))
      expect(Date.now() - started).toBeLessThan(5000)
      expect(appError(res)).toMatchObject({ error: 'temporarily_unavailable', state: 'app-state' })
    } finally {
      f.hang.delete('upstream.test')
    }
  })
})

describe('without an app to tell', () => {
  it('a page below 500 names the provider that failed, and no session starts', async () => {
    const b = browser(f)
    const before = await sessions()
    const res = await b.get('/federation/partner/challenge?return_to=%2Faccount')
    expect(res.statusCode).toBe(424)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.body).toContain('<h1>Partner ID is not available</h1>')
    expect(await sessions()).toBe(before)
  })

  it('a disabled provider and an unknown one are pages too', async () => {
    const off = await browser(f).get('/federation/off/challenge')
    expect(off.statusCode).toBe(403)
    expect(off.body).toContain('Signing in with Old ID is turned off at the moment.')
    const unknown = await browser(f).get('/federation/nowhere/challenge')
    expect(unknown.statusCode).toBe(404)
    expect(unknown.body).toContain('There is no such way to sign in here.')
  })
})

describe('the server itself', () => {
  it('is ready whatever state the providers are in', async () => {
    const res = await f.authz.app.inject({ method: 'GET', url: '/health/ready' })
    expect(res.statusCode).toBe(200)
  })
})

describe('audit and metrics', () => {
  it('records every failure with its scheme and reason, and counts them', async () => {
    expect(audits().map((a) => [a.event, a.idp, a.reason])).toEqual([
      ['federation.failed', 'corp', 'cancelled'],
      ['federation.failed', 'corp', 'upstream_error'],
      ['federation.failed', 'partner', 'unavailable'],
      ['federation.failed', 'corp', 'unavailable'],
      ['federation.failed', 'partner', 'unavailable'],
      ['federation.failed', 'off', 'disabled'],
      ['federation.failed', 'nowhere', 'unknown'],
    ])
    const metrics = parseMetrics(await f.authz.app.authz.metrics!.registry.metrics())
    expect(metrics.get(series('authz_federated_signins_total', { scheme: 'corp', outcome: 'cancelled' }))).toBe(1)
    expect(metrics.get(series('authz_federated_signins_total', { scheme: 'corp', outcome: 'unavailable' }))).toBe(1)
    expect(metrics.get(series('authz_federated_signins_total', { scheme: 'partner', outcome: 'unavailable' }))).toBe(2)
  })
})
