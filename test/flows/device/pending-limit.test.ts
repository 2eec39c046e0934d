// The cap on pending device authorizations per client (RFC 8628 §3.1-3.2): without it anyone
// holding a public client's id could fill device_authorizations with requests nobody will ever
// decide. DEVICE_MAX_PENDING_PER_CLIENT sets it; 0: none. Over it: 429 temporarily_unavailable
// with Retry-After (why that answer: src/flows/device/authorization.ts).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../../src/config.js'
import type { TestApp } from '../../helpers/app.js'
import { authorize, CONSOLE, createDeviceTestApp, NO_STORE, TV } from './harness.js'

const FULL = { error: 'temporarily_unavailable', error_description: 'too many pending device authorizations for this client, retry later' }

const pending = async (authz: TestApp) =>
  (
    await authz.db.query<{ client_id: string; n: number }>(
      `SELECT client_id, count(*)::int AS n FROM device_authorizations WHERE status = 'pending' GROUP BY client_id ORDER BY client_id`,
    )
  ).rows

describe('DEVICE_MAX_PENDING_PER_CLIENT', () => {
  it('defaults to 1000, accepts 0 (no cap), refuses a negative or fractional value with a sentence', () => {
    expect(loadConfig({}).deviceMaxPendingPerClient).toBe(1000)
    expect(loadConfig({ DEVICE_MAX_PENDING_PER_CLIENT: '0' }).deviceMaxPendingPerClient).toBe(0)
    for (const bad of ['-1', '2.5', 'many']) {
      expect(() => loadConfig({ DEVICE_MAX_PENDING_PER_CLIENT: bad })).toThrow(
        /^DEVICE_MAX_PENDING_PER_CLIENT must be an integer from 0 to 1000000, got "/,
      )
    }
  })
})

describe('a cap of 3', () => {
  let authz: TestApp
  beforeAll(async () => {
    authz = await createDeviceTestApp({ env: { DEVICE_MAX_PENDING_PER_CLIENT: '3' } })
  })
  afterAll(() => authz.close())
  beforeEach(async () => {
    await authz.db.query('DELETE FROM device_authorizations')
  })

  it('refuses the fourth pending request of a client with 429 temporarily_unavailable; other clients are unaffected', async () => {
    for (let i = 0; i < 3; i++) expect((await authorize(authz, TV)).statusCode).toBe(200)
    authz.clock.advance(20)
    const refused = await authorize(authz, TV)
    expect({ status: refused.statusCode, body: refused.json() }).toEqual({ status: 429, body: FULL })
    expect(refused.headers).toMatchObject(NO_STORE)
    // The oldest pending request expires 300 s after it was made, 20 s ago: a place frees then.
    expect(refused.headers['retry-after']).toBe('280')
    for (let i = 0; i < 3; i++) expect((await authorize(authz, { scope: 'openid' }, CONSOLE)).statusCode).toBe(200)
    expect(await pending(authz)).toEqual([
      { client_id: 'console', n: 3 },
      { client_id: 'tv', n: 3 },
    ])
  })

  it('frees a place when a request is decided or expires', async () => {
    for (let i = 0; i < 3; i++) expect((await authorize(authz, TV)).statusCode).toBe(200)
    await authz.db.query(`UPDATE device_authorizations SET status = 'denied' WHERE id = (SELECT id FROM device_authorizations LIMIT 1)`)
    expect((await authorize(authz, TV)).statusCode).toBe(200)
    expect((await authorize(authz, TV)).statusCode).toBe(429)
    authz.clock.advance(301) // DEVICE_CODE_LIFETIME is 300 s
    expect((await authorize(authz, TV)).statusCode).toBe(200)
  })

  it('holds under concurrency: of 8 simultaneous requests exactly 3 are accepted, in every trial', { timeout: 60_000 }, async () => {
    const off: string[] = []
    for (let trial = 0; trial < 10; trial++) {
      await authz.db.query('DELETE FROM device_authorizations')
      const statuses = (await Promise.all(Array.from({ length: 8 }, () => authorize(authz, TV)))).map((r) => r.statusCode)
      const stored = (await pending(authz))[0]?.n ?? 0
      const accepted = statuses.filter((s) => s === 200).length
      if (accepted !== 3 || statuses.filter((s) => s === 429).length !== 5 || stored !== 3)
        off.push(`trial ${trial}: ${statuses.join(' ')}, ${stored} stored`)
    }
    expect(off).toEqual([])
  })

  it('counts with an index on the pending requests of a client', async () => {
    const { rows } = await authz.db.query<{ indexdef: string }>(
      `SELECT indexdef FROM pg_indexes WHERE tablename = 'device_authorizations' AND indexname = 'device_authorizations_pending_idx'`,
    )
    expect(rows.map((r) => r.indexdef)).toEqual([
      "CREATE INDEX device_authorizations_pending_idx ON public.device_authorizations USING btree (client_id, expires_at) WHERE (status = 'pending'::text)",
    ])
  })
})

describe('no cap', () => {
  it('DEVICE_MAX_PENDING_PER_CLIENT=0 accepts any number of pending requests', async () => {
    // All from one address: the per-address cap (pending-per-address.test.ts) is off too.
    const authz = await createDeviceTestApp({ env: { DEVICE_MAX_PENDING_PER_CLIENT: '0', DEVICE_MAX_PENDING_PER_ADDRESS: '0' } })
    try {
      for (let i = 0; i < 25; i++) expect((await authorize(authz, TV)).statusCode).toBe(200)
      expect(await pending(authz)).toEqual([{ client_id: 'tv', n: 25 }])
    } finally {
      await authz.close()
    }
  })
})
