// The sign-in page reached from /device says which application asks, as it does for the
// authorization endpoint and the CIBA approval page (RFC 8628 §5.4: the person should know what
// they are about to let in before typing a password). The name comes from the request the
// throttled lookup at /device found: /device sends the request's id along with the code, and the
// sign-in page names the client only when that id and that code belong together. A code alone
// names nothing there, so the sign-in page is no way around the wrong-code throttle (§5.1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../../helpers/app.js'
import { createDeviceTestApp, devicePath, requestIdOf, signInForDevice, start } from './harness.js'

let authz: TestApp
beforeAll(async () => {
  authz = await createDeviceTestApp()
})
afterAll(() => authz.close())

const get = (url: string, address = '127.0.0.1') => authz.app.inject({ method: 'GET', url, remoteAddress: address })
const lead = (body: string) => /<p class="lead">(.*?)<\/p>/.exec(body)?.[1]
const returnTo = (body: string) => /<form method="post" action="\/account\/sign-in\?return_to=([^"]*)"/.exec(body)?.[1]
const signInPage = (target: string) => `/account/sign-in?return_to=${encodeURIComponent(target)}`
const NAMED = 'to continue to <strong id="client-name">Living Room &lt;TV&gt;</strong>'

describe('the sign-in page reached from /device', () => {
  it('names the device application; /device sends the request along with the code', async () => {
    const s = await start(authz)
    const id = await requestIdOf(authz, s.user_code)
    const first = await get(devicePath(s.user_code.toLowerCase()), '10.1.0.1')
    expect(first.statusCode).toBe(303)
    expect(first.headers.location).toBe(signInPage(`/device?user_code=${s.user_code}&request=${id}`))
    const page = await get(first.headers.location!)
    expect(page.statusCode).toBe(200)
    expect(lead(page.body)).toBe(NAMED)
    // The form posts back to the same target: after the sign-in, the device page of that code.
    expect(decodeURIComponent(returnTo(page.body)!.replace(/&amp;/g, '&'))).toBe(`/device?user_code=${s.user_code}&request=${id}`)
  })

  it('names nothing for a code alone, another request id, or an id with another code, and still returns to /device', async () => {
    const s = await start(authz)
    const other = await start(authz, { client_id: 'console', client_secret: 'console-secret', scope: 'openid' })
    const id = await requestIdOf(authz, s.user_code)
    const otherId = (
      await authz.db.query<{ id: string }>(
        `SELECT id FROM device_authorizations WHERE client_id = 'console' ORDER BY created_at DESC LIMIT 1`,
      )
    ).rows[0]!.id
    for (const target of [
      `/device?user_code=${s.user_code}`,
      `/device?user_code=${s.user_code}&request=${otherId}`,
      `/device?user_code=${other.user_code}&request=${id}`,
      `/device?user_code=${s.user_code}&request=${'0'.repeat(32)}`,
      `/device?user_code=${s.user_code}&request=not-an-id`,
    ]) {
      const page = await get(signInPage(target))
      expect({ target, status: page.statusCode, lead: lead(page.body) }).toEqual({ target, status: 200, lead: 'to your account' })
      expect(decodeURIComponent(returnTo(page.body)!.replace(/&amp;/g, '&'))).toBe(target)
    }
  })

  it('the decision screen links to a sign-in page (to switch accounts) that names the application too', async () => {
    const s = await start(authz)
    const id = await requestIdOf(authz, s.user_code)
    const cookie = await signInForDevice(authz, s.user_code)
    const shown = await authz.app.inject({ method: 'GET', url: devicePath(s.user_code), headers: { cookie }, remoteAddress: '10.1.0.2' })
    expect(shown.statusCode).toBe(200)
    const href = signInPage(`/device?user_code=${s.user_code}&request=${id}`)
    expect(shown.body).toContain(`href="${href.replace(/&/g, '&amp;')}"`)
    expect(lead((await get(href)).body)).toBe(NAMED)
  })
})
