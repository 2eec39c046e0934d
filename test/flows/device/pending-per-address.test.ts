// The cap on pending device authorizations per client and requesting address: without it one
// address holding a public client's id fills DEVICE_MAX_PENDING_PER_CLIENT in seconds and keeps
// it full, shutting out every real device of that client. DEVICE_MAX_PENDING_PER_ADDRESS sets it
// (an IPv6 /64 counts as one address, src/domain/address.ts); 0: none. Over it: 429
// temporarily_unavailable with Retry-After, as the per-client cap.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../../src/config.js'
import type { TestApp } from '../../helpers/app.js'
import { authorize, createDeviceTestApp, NO_STORE, TV } from './harness.js'

const FULL = {
  error: 'temporarily_unavailable',
  error_description: 'too many pending device authorizations for this client from this address, retry later',
}

const pendingByAddress = async (authz: TestApp) =>
  (
    await authz.db.query<{ requester_address: string; n: number }>(
      `SELECT requester_address, count(*)::int AS n FROM device_authorizations WHERE status = 'pending' GROUP BY requester_address ORDER BY requester_address`,
    )
  ).rows

describe('DEVICE_MAX_PENDING_PER_ADDRESS', () => {
  it('defaults to 10, accepts 0 (no cap), refuses a negative or fractional value with a sentence', () => {
    expect(loadConfig({}).deviceMaxPendingPerAddress).toBe(10)
    expect(loadConfig({ DEVICE_MAX_PENDING_PER_ADDRESS: '0' }).deviceMaxPendingPerAddress).toBe(0)
    for (const bad of ['-1', '2.5', 'many']) {
      expect(() => loadConfig({ DEVICE_MAX_PENDING_PER_ADDRESS: bad })).toThrow(
        /^DEVICE_MAX_PENDING_PER_ADDRESS must be an integer from 0 to 1000000, got "/,
      )
    }
  })
})

describe('a cap of 2 per address (and 100 per client)', () => {
  let authz: TestApp
  beforeAll(async () => {
    authz = await createDeviceTestApp({ env: { DEVICE_MAX_PENDING_PER_ADDRESS: '2', DEVICE_MAX_PENDING_PER_CLIENT: '100' } })
  })
  afterAll(() => authz.close())
  beforeEach(async () => {
    await authz.db.query('DELETE FROM device_authorizations')
  })

  it('refuses the third pending request from one address with 429; another address of the same client still gets through', async () => {
    for (let i = 0; i < 2; i++) expect((await authorize(authz, TV, {}, '203.0.113.7')).statusCode).toBe(200)
    authz.clock.advance(30)
    const refused = await authorize(authz, TV, {}, '203.0.113.7')
    expect({ status: refused.statusCode, body: refused.json() }).toEqual({ status: 429, body: FULL })
    expect(refused.headers).toMatchObject(NO_STORE)
    // That address's oldest pending request expires 300 s after it was made, 30 s ago.
    expect(refused.headers['retry-after']).toBe('270')
    expect((await authorize(authz, TV, {}, '198.51.100.9')).statusCode).toBe(200)
    // An IPv4-mapped IPv6 peer is the same IPv4 address.
    expect((await authorize(authz, TV, {}, '::ffff:203.0.113.7')).statusCode).toBe(429)
    expect(await pendingByAddress(authz)).toEqual([
      { requester_address: '198.51.100.9', n: 1 },
      { requester_address: '203.0.113.7', n: 2 },
    ])
    authz.clock.advance(271)
    expect((await authorize(authz, TV, {}, '203.0.113.7')).statusCode).toBe(200)
  })

  it('counts an IPv6 /64 as one address', async () => {
    expect((await authorize(authz, TV, {}, '2001:db8:1:2::1')).statusCode).toBe(200)
    expect((await authorize(authz, TV, {}, '2001:db8:1:2:aaaa:bbbb:cccc:dddd')).statusCode).toBe(200)
    const refused = await authorize(authz, TV, {}, '2001:db8:1:2:ffff::9')
    expect({ status: refused.statusCode, body: refused.json() }).toEqual({ status: 429, body: FULL })
    expect((await authorize(authz, TV, {}, '2001:db8:1:3::1')).statusCode).toBe(200) // the next /64
    expect(await pendingByAddress(authz)).toEqual([
      { requester_address: '2001:db8:1:2::/64', n: 2 },
      { requester_address: '2001:db8:1:3::/64', n: 1 },
    ])
  })

  it(
    'holds under concurrency: one place left, of 6 simultaneous requests from one address exactly 1 is accepted, in every trial',
    { timeout: 60_000 },
    async () => {
      const off: string[] = []
      for (let trial = 0; trial < 8; trial++) {
        await authz.db.query('DELETE FROM device_authorizations')
        expect((await authorize(authz, TV, {}, '203.0.113.7')).statusCode).toBe(200)
        const statuses = (await Promise.all(Array.from({ length: 6 }, () => authorize(authz, TV, {}, '203.0.113.7')))).map(
          (r) => r.statusCode,
        )
        const stored = (await pendingByAddress(authz))[0]?.n ?? 0
        if (statuses.filter((s) => s === 200).length !== 1 || statuses.filter((s) => s === 429).length !== 5 || stored !== 2)
          off.push(`trial ${trial}: ${statuses.join(' ')}, ${stored} stored`)
      }
      expect(off).toEqual([])
    },
  )

  it('counts with an index on the pending requests of a client and address', async () => {
    const { rows } = await authz.db.query<{ indexdef: string }>(
      `SELECT indexdef FROM pg_indexes WHERE tablename = 'device_authorizations' AND indexname = 'device_authorizations_pending_address_idx'`,
    )
    expect(rows.map((r) => r.indexdef)).toEqual([
      "CREATE INDEX device_authorizations_pending_address_idx ON public.device_authorizations USING btree (client_id, requester_address, expires_at) WHERE (status = 'pending'::text)",
    ])
  })
})

describe('no cap per address', () => {
  it('DEVICE_MAX_PENDING_PER_ADDRESS=0 leaves only the per-client cap', async () => {
    const authz = await createDeviceTestApp({ env: { DEVICE_MAX_PENDING_PER_ADDRESS: '0', DEVICE_MAX_PENDING_PER_CLIENT: '15' } })
    try {
      for (let i = 0; i < 15; i++) expect((await authorize(authz, TV, {}, '203.0.113.7')).statusCode).toBe(200)
      const refused = await authorize(authz, TV, {}, '203.0.113.7')
      expect({ status: refused.statusCode, description: refused.json().error_description }).toEqual({
        status: 429,
        description: 'too many pending device authorizations for this client, retry later',
      })
      expect(await pendingByAddress(authz)).toEqual([{ requester_address: '203.0.113.7', n: 15 }])
    } finally {
      await authz.close()
    }
  })
})
