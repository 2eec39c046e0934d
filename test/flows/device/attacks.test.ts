// The device flow under attack (RFC 8628 §5.1 user code guessing, and what the logs keep):
// per-address counting that an IPv6 host cannot sidestep by changing its interface identifier,
// and user codes kept out of the request log wherever they travel in a URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../../helpers/app.js'
import { createDeviceTestApp, decideWith, devicePath, signInForDevice, start } from './harness.js'

let authz: TestApp
beforeAll(async () => {
  authz = await createDeviceTestApp()
})
afterAll(() => authz.close())

const get = (url: string, address: string) => authz.app.inject({ method: 'GET', url, remoteAddress: address })
const wrong = (i: number) => devicePath(`BBBB-BBB${'CDFGHJKLMN'[i]}`)

describe('user code guessing from IPv6', () => {
  it('addresses of one /64 share a count: a host cannot pick a fresh address for each guess', async () => {
    const s = await start(authz)
    // Every IPv6 subscriber holds at least a /64: 2^64 addresses to rotate through.
    for (let i = 0; i < 5; i++) expect((await get(wrong(i), `2001:db8:1:2::${i + 1}`)).statusCode).toBe(404)
    const blocked = await get(devicePath(s.user_code), '2001:db8:1:2:ffff:ffff:ffff:fffe')
    expect(blocked.statusCode).toBe(429)
    expect((await get(devicePath(s.user_code), '2001:db8:1:3::1')).statusCode).toBe(303) // the next /64: to sign-in
  })

  it('IPv4 clients of a dual-stack listener (::ffff:a.b.c.d) are still counted one address each', async () => {
    const s = await start(authz)
    for (let i = 0; i < 5; i++) expect((await get(wrong(i), '::ffff:192.0.2.1')).statusCode).toBe(404)
    expect((await get(devicePath(s.user_code), '::ffff:192.0.2.1')).statusCode).toBe(429)
    expect((await get(devicePath(s.user_code), '::ffff:192.0.2.2')).statusCode).toBe(303)
  })
})

describe('user code guessing in parallel', () => {
  it('a burst of concurrent guesses from one address gets no more answers than the limit allows (20 trials)', async () => {
    const A = 'BCDFGHJKLMNPQRSTVWXZ'
    for (let trial = 0; trial < 20; trial++) {
      const rights: string[] = []
      for (let i = 0; i < 3; i++) rights.push((await start(authz)).user_code)
      const wrongs = Array.from({ length: 12 }, (_, i) => `BBBB-${A[trial]}${A[i]}BB`)
      const address = `198.51.100.${trial + 1}`
      const res = await Promise.all([...wrongs, ...rights].map((c) => get(devicePath(c), address)))
      const answered = res.filter((r) => r.statusCode !== 429)
      // USER_CODE_FAILURE_LIMIT (5): the address is told about at most 5 codes; the rest are blocked.
      expect(answered.length, `trial ${trial}: ${res.map((r) => r.statusCode).join(' ')}`).toBeLessThanOrEqual(5)
      authz.clock.advance(24 * 3600) // every block over before the next trial
    }
  })
})

describe('user codes in the request log', () => {
  it('the sign-in round trip (return_to carries the device page URL) logs no user code', async () => {
    const s = await start(authz)
    const cookie = await signInForDevice(authz, s.user_code)
    const done = await decideWith(authz, s.user_code, 'approve', cookie)
    expect(done.statusCode).toBe(200)
    const bare = s.user_code.replace('-', '')
    const leaked = authz.logs.filter((l) => l.includes(s.user_code) || l.includes(bare))
    expect(leaked).toEqual([])
    // The sign-in requests are logged, with the code's place redacted.
    expect(authz.logs.some((l) => l.includes('"url":"/account/sign-in?return_to=%2Fdevice%3Fuser_code%3D%5Bredacted%5D"'))).toBe(true)
  })
})
