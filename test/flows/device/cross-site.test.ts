// The per-address wrong-code block of /device (RFC 8628 §5.1) must not be a weapon: a page on
// another site can make a victim's browser send wrong codes (an auto-submitted form, a link, an
// image), from the victim's address. None of those requests may count: a form POST from another
// site is refused by the Origin / Sec-Fetch-Site and CSRF checks before the page looks at the
// code, and a GET another site started (Sec-Fetch-Site cross-site or same-site) is not looked up
// at all: it shows the entry form with the code filled in, for the person to confirm. Afterwards
// the victim's own right code still works; nor do they use up the address's request limit
// (RATE_LIMIT_SIGN_IN, 20 a minute here). Each attack runs from its own address.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { form, FORM, type TestApp } from '../../helpers/app.js'
import { createDeviceTestApp, devicePath, start } from './harness.js'

let authz: TestApp
beforeAll(async () => {
  authz = await createDeviceTestApp({ env: { RATE_LIMIT_SIGN_IN: '20' } })
})
afterAll(() => authz.close())

const h1 = (body: string) => /<h1>([^<]*)<\/h1>/.exec(body)?.[1]
const wrong = (i: number) => `BBBB-BB${'CDFGHJKLMN'[Math.floor(i / 10)]}${'CDFGHJKLMN'[i % 10]}`
const SIGN_IN = /^\/account\/sign-in\?return_to=%2Fdevice%3Fuser_code%3D/

/** What the person's own browser sends after typing the code on the page itself. */
const typedHere = (userCode: string, address: string) =>
  authz.app.inject({
    method: 'GET',
    url: devicePath(userCode),
    remoteAddress: address,
    headers: { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate' },
  })

const counted = async (address: string) =>
  (await authz.db.query(`SELECT failures, blocks FROM failure_counters WHERE kind = 'device_user_code' AND name = $1`, [address])).rows

describe('wrong codes sent from another site', () => {
  it('auto-posted forms (Origin and Sec-Fetch-Site of the other site, no CSRF token) are refused and not counted', async () => {
    const address = '192.0.2.10'
    for (let i = 0; i < 12; i++) {
      const res = await authz.app.inject({
        method: 'POST',
        url: devicePath(wrong(i)),
        remoteAddress: address,
        headers: { ...FORM, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' },
        payload: form({ decision: 'approve' }),
      })
      expect({ status: res.statusCode, h1: h1(res.body) }).toEqual({ status: 403, h1: 'Form not accepted' })
    }
    expect(await counted(address)).toEqual([])
    const s = await start(authz)
    const mine = await typedHere(s.user_code, address)
    expect(mine.statusCode).toBe(303)
    expect(mine.headers.location).toMatch(SIGN_IN)
  })

  it('links, auto-submitted GET forms and images from another site show the code to confirm and count nothing', async () => {
    const address = '192.0.2.11'
    for (let i = 0; i < 12; i++) {
      const site = i % 2 === 0 ? 'cross-site' : 'same-site' // a sibling subdomain is another site's page too
      const res = await authz.app.inject({
        method: 'GET',
        url: devicePath(wrong(i)),
        remoteAddress: address,
        headers: { 'sec-fetch-site': site },
      })
      expect({ status: res.statusCode, h1: h1(res.body) }).toEqual({ status: 200, h1: 'Connect a device' })
      expect(res.body).toContain(`value="${wrong(i)}"`)
      expect(res.body).toContain('Check that this is the code your device shows')
    }
    expect(await counted(address)).toEqual([])
    const s = await start(authz)
    const mine = await typedHere(s.user_code, address)
    expect(mine.statusCode).toBe(303)
    expect(mine.headers.location).toMatch(SIGN_IN)
  })

  it('a right code from another site gets the very page a wrong one gets: no redirect, no application named', async () => {
    const s = await start(authz)
    const other = wrong(99)
    const right = await authz.app.inject({
      method: 'GET',
      url: devicePath(s.user_code),
      remoteAddress: '192.0.2.12',
      headers: { 'sec-fetch-site': 'cross-site' },
    })
    const bad = await authz.app.inject({
      method: 'GET',
      url: devicePath(other),
      remoteAddress: '192.0.2.12',
      headers: { 'sec-fetch-site': 'cross-site' },
    })
    expect(right.statusCode).toBe(200)
    expect(right.body.replace(s.user_code, 'CODE')).toBe(bad.body.replace(other, 'CODE'))
    expect(right.body).not.toContain('Living Room')
  })

  it('something that cannot be a code is not echoed into the form', async () => {
    const res = await authz.app.inject({
      method: 'GET',
      url: devicePath('Call +1 555 0100 now'),
      remoteAddress: '192.0.2.13',
      headers: { 'sec-fetch-site': 'cross-site' },
    })
    expect(res.statusCode).toBe(200)
    expect(res.body).not.toContain('555')
    expect(res.body).toContain('<input id="user_code" name="user_code" type="text" value=""')
  })

  it('a code the person opens directly (a scanned QR code, a typed URL: Sec-Fetch-Site none) or from a client without fetch metadata is looked up at once', async () => {
    for (const headers of [{ 'sec-fetch-site': 'none' }, {}]) {
      const s = await start(authz)
      const res = await authz.app.inject({ method: 'GET', url: devicePath(s.user_code), remoteAddress: '192.0.2.14', headers })
      expect(res.statusCode).toBe(303)
      expect(res.headers.location).toMatch(SIGN_IN)
    }
    // ...and a wrong one so opened is still counted.
    await authz.app.inject({ method: 'GET', url: devicePath(wrong(0)), remoteAddress: '192.0.2.14', headers: { 'sec-fetch-site': 'none' } })
    expect(await counted('192.0.2.14')).toEqual([{ failures: 1, blocks: 0 }])
  })

  it('a flood of them from another site does not use up the request limit of the victim address', async () => {
    const address = '192.0.2.15'
    const statuses: number[] = []
    for (let i = 0; i < 25; i++) {
      const res = await authz.app.inject({
        method: 'GET',
        url: devicePath(wrong(i)),
        remoteAddress: address,
        headers: { 'sec-fetch-site': 'cross-site' },
      })
      statuses.push(res.statusCode)
    }
    // The flood meets the limit itself...
    expect(statuses).toEqual([...Array<number>(20).fill(200), ...Array<number>(5).fill(429)])
    // ...while the person at that address still has all of theirs.
    const s = await start(authz)
    const mine = await typedHere(s.user_code, address)
    expect(mine.statusCode).toBe(303)
    expect(mine.headers.location).toMatch(SIGN_IN)
  })
})
