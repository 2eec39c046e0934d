// Prometheus metrics on their own listener (METRICS_PORT), scraped after real requests over
// sockets: request counts and latencies by route and status, tokens by grant and type,
// introspections by result, client-authentication failures, expired rows, process metrics;
// nothing of it on the public listener.
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { basic, createTestApp, form, FORM, type TestApp } from '../helpers/app.js'
import { usingServer } from '../helpers/db.js'
import { seedTokens } from '../flows/token/token-fixtures.js'
import { parseMetrics, series } from './prometheus.js'

let authz: TestApp
let publicUrl: string
let metricsUrl: string

beforeAll(async () => {
  authz = await createTestApp({ env: { METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' } })
  await seedTokens(authz)
  const address = await authz.app.listen({ port: 0, host: '127.0.0.1' })
  publicUrl = address
  const listener = await authz.app.authz.listenMetrics()
  const { port } = listener!.address() as AddressInfo
  metricsUrl = `http://127.0.0.1:${port}`
})
afterAll(() => authz.close())

async function post(path: string, params: Record<string, string>, authorization?: string) {
  const res = await fetch(`${publicUrl}${path}`, {
    method: 'POST',
    headers: { ...FORM, ...(authorization ? { authorization } : {}) },
    body: form(params),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

async function scrape(): Promise<Map<string, number>> {
  const res = await fetch(`${metricsUrl}/metrics`)
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
  return parseMetrics(await res.text())
}

const TOKEN = '/connect/token'
const INTROSPECT = '/connect/introspect'

describe('metrics', () => {
  it('counts requests, tokens, introspections and failures as they happened', async () => {
    const cc = { grant_type: 'client_credentials', scope: 'orders.read' }
    expect((await post(TOKEN, cc, basic('backend', 's3cret'))).status).toBe(200)
    expect((await post(TOKEN, cc, basic('backend', 's3cret'))).status).toBe(200)
    expect((await post(TOKEN, cc, basic('backend', 'wrong-secret'))).status).toBe(401)
    const ref = await post(TOKEN, cc, basic('ref-client', 'ref-secret'))
    expect(ref.status).toBe(200)
    const api = basic('orders-api', 'orders-secret')
    expect((await post(INTROSPECT, { token: ref.body.access_token as string }, api)).body.active).toBe(true)
    expect((await post(INTROSPECT, { token: 'not-a-token' }, api)).body).toEqual({ active: false })
    expect((await post(INTROSPECT, { token: 'x' }, basic('orders-api', 'wrong'))).status).toBe(401)
    expect((await fetch(`${publicUrl}/metrics`)).status).toBe(404)

    const m = await scrape()
    const requests = (method: string, route: string, status: number) =>
      m.get(series('authz_http_requests_total', { method, route, status_code: status }))
    expect(requests('POST', TOKEN, 200)).toBe(3)
    expect(requests('POST', TOKEN, 401)).toBe(1)
    expect(requests('POST', INTROSPECT, 200)).toBe(2)
    expect(requests('POST', INTROSPECT, 401)).toBe(1)
    expect(requests('GET', 'unmatched', 404)).toBe(1)
    const latency = (suffix: string, extra: Record<string, string> = {}) =>
      m.get(series(`authz_http_request_duration_seconds_${suffix}`, { method: 'POST', route: TOKEN, status_code: 200, ...extra }))
    expect(latency('count')).toBe(3)
    expect(latency('bucket', { le: '+Inf' })).toBe(3)
    expect(latency('bucket', { le: '10' })).toBe(3)
    expect(latency('sum')).toBeGreaterThan(0)
    expect(latency('sum')).toBeLessThan(30)

    expect(m.get(series('authz_tokens_issued_total', { grant_type: 'client_credentials', token_type: 'access_token' }))).toBe(3)
    expect(m.get(series('authz_tokens_issued_total', { grant_type: 'client_credentials', token_type: 'refresh_token' }))).toBeUndefined()
    for (const [result, n] of [
      ['active', 1],
      ['inactive', 1],
      ['rejected', 1],
    ] as const) {
      expect(m.get(series('authz_introspections_total', { result }))).toBe(n)
    }
    expect(m.get(series('authz_client_auth_failures_total', { reason: 'bad_secret' }))).toBe(2)
    expect(m.get(series('authz_lockouts_total', { kind: 'client' }))).toBe(0)
  })

  it('reports expired rows awaiting cleanup, by table', async () => {
    const before = await scrape()
    expect(before.get(series('authz_expired_rows', { table: 'persisted_grants' }))).toBe(0)
    authz.clock.advance(601) // ref-client's reference token lives 600 s
    const after = await scrape()
    expect(after.get(series('authz_expired_rows', { table: 'persisted_grants' }))).toBe(1)
    for (const table of ['ciba_requests', 'grant_families', 'revoked_tokens', 'user_sessions', 'used_jtis']) {
      expect(after.get(series('authz_expired_rows', { table }))).toBe(0)
    }
  })

  it("reports Node's process metrics and, with a connection pool, its use and waits", async () => {
    const m = await scrape()
    expect(m.get('process_cpu_user_seconds_total')).toBeGreaterThan(0)
    expect(m.get('process_resident_memory_bytes')).toBeGreaterThan(0)
    expect(m.get('nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0)
    const idle = m.get(series('authz_db_pool_connections', { state: 'idle' }))
    if (usingServer()) {
      expect(idle! + m.get(series('authz_db_pool_connections', { state: 'in_use' }))!).toBeGreaterThanOrEqual(1)
      expect(m.get(series('authz_db_pool_connections', { state: 'waiting' }))).toBeGreaterThanOrEqual(0) // a scrape's own query may wait for a new connection
      expect(m.get('authz_db_pool_acquired_total')).toBeGreaterThan(5)
      expect(m.get('authz_db_pool_wait_seconds_total')).toBeGreaterThan(0)
    } else {
      expect(idle).toBeUndefined() // embedded PGlite has no pool
      expect(m.get('authz_db_pool_acquired_total')).toBeUndefined()
      expect(m.get('authz_db_pool_wait_seconds_total')).toBeUndefined()
    }
  })

  it('serves nothing else on the metrics listener', async () => {
    expect((await fetch(`${metricsUrl}/metrics`, { method: 'POST' })).status).toBe(404)
    expect((await fetch(`${metricsUrl}/`)).status).toBe(404)
    expect((await fetch(`${metricsUrl}/connect/token`)).status).toBe(404)
  })
})

describe('without METRICS_PORT', () => {
  it('collects nothing and listens nowhere', async () => {
    const plain = await createTestApp()
    try {
      expect(plain.app.authz.metrics).toBeUndefined()
      expect(await plain.app.authz.listenMetrics()).toBeUndefined()
      expect((await plain.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404)
    } finally {
      await plain.close()
    }
  })

  it('counts a refused second factor as a second factor only, never as a passkey', async () => {
    authz.app.authz.audit.emit({
      event: 'signin.second_factor_failed',
      username: 'alice',
      subject: 'u-alice',
      factor: 'otp',
      reason: 'bad_code',
    })
    const m = await scrape()
    expect(m.get(series('authz_second_factors_total', { outcome: 'failed' }))).toBe(1)
    expect([...m.keys()].filter((k) => k.startsWith('authz_passkeys_total') && !/outcome="(added|removed|used|failed)"/.test(k))).toEqual(
      [],
    )
    expect(m.get(series('authz_passkeys_total', { outcome: 'failed' })) ?? 0).toBe(0)
  })
})
