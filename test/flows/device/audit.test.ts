// The device flow (RFC 8628) through the same audit sink: approved and denied on the device page,
// the tokens at the token endpoint, a reused device_code's family revoked; counted in the metrics.
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../../helpers/app.js'
import { createDeviceTestApp, decide, DEVICE, poll, start } from './harness.js'
import { parseMetrics, series } from '../../observe/prometheus.js'

let authz: TestApp
beforeAll(async () => {
  authz = await createDeviceTestApp({ env: { METRICS_PORT: '0' } })
})
afterAll(() => authz.close())

type Line = Record<string, unknown>
async function during(fn: () => Promise<unknown>): Promise<Line[]> {
  const from = authz.logs.length
  await fn()
  return authz.logs
    .slice(from)
    .map((l) => JSON.parse(l) as Line)
    .filter((l) => l.log === 'audit')
}

describe('audit events of the device flow', () => {
  it('approved, the tokens issued, a reuse revoking the family; denied', async () => {
    const s = await start(authz)
    const approved = await during(() => decide(authz, s.user_code, 'approve'))
    expect(approved.map((e) => e.event)).toEqual(['signin.succeeded', 'device.approved'])
    expect(approved[1]).toEqual({
      level: 30,
      time: expect.any(String),
      msg: 'device authorization approved',
      log: 'audit',
      audit_version: 1,
      event: 'device.approved',
      outcome: 'success',
      client_id: 'tv',
      subject: expect.any(String),
      grant_type: DEVICE,
      address: '127.0.0.1',
      scope: 'openid profile orders.read offline_access',
    })
    const subject = approved[1]!.subject

    const issued = await during(async () => expect((await poll(authz, s.device_code)).statusCode).toBe(200))
    expect(issued).toEqual([
      expect.objectContaining({
        event: 'token.issued',
        client_id: 'tv',
        subject,
        grant_type: DEVICE,
        token_types: ['access_token', 'refresh_token', 'id_token'],
      }),
    ])

    authz.clock.advance(10)
    const reused = await during(async () => expect((await poll(authz, s.device_code)).json().error).toBe('invalid_grant'))
    expect(reused).toEqual([
      expect.objectContaining({ level: 40, event: 'grant.family_revoked', client_id: 'tv', subject, grant_type: DEVICE, reason: 'reuse' }),
    ])

    const d = await start(authz)
    const denied = await during(() => decide(authz, d.user_code, 'deny'))
    expect(denied[1]).toMatchObject({
      event: 'device.denied',
      outcome: 'failure',
      client_id: 'tv',
      subject,
      grant_type: DEVICE,
      reason: 'user_denied',
    })
    expect(authz.logs.join('\n')).not.toContain(s.device_code)
    expect(authz.logs.join('\n')).not.toContain(s.user_code)

    const listener = await authz.app.authz.listenMetrics()
    const m = parseMetrics(await (await fetch(`http://127.0.0.1:${(listener!.address() as AddressInfo).port}/metrics`)).text())
    for (const [outcome, n] of [
      ['approved', 1],
      ['denied', 1],
      ['token_issued', 1],
    ] as const) {
      expect(m.get(series('authz_device_authorizations_total', { outcome })), outcome).toBe(n)
    }
    expect(m.get(series('authz_grant_families_revoked_total', { grant_type: DEVICE }))).toBe(1)
  })
})
