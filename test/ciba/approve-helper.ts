// Drives the approval pages over app.inject the way a browser without JavaScript would.
import { expect } from 'vitest'
import type { CibaTestApp } from './harness.js'
import { FORM, form } from './harness.js'

export function cookiesFrom(setCookie: string | string[] | undefined): string {
  const list = setCookie === undefined ? [] : Array.isArray(setCookie) ? setCookie : [setCookie]
  return list.map((c) => c.split(';')[0]).join('; ')
}

export function csrfIn(html: string): string {
  return /name="csrf" value="([^"]+)"/.exec(html)![1]!
}

/** GET the page, sign in, and return the session cookie and the consent page. */
export async function signIn(t: CibaTestApp, requestId: string, username: string, password: string) {
  const page = await t.app.inject({ method: 'GET', url: `/ciba/approve?request=${requestId}` })
  const pre = cookiesFrom(page.headers['set-cookie'])
  const res = await t.app.inject({
    method: 'POST', url: `/ciba/approve/sign-in?request=${requestId}`, headers: { ...FORM, cookie: pre },
    payload: form({ csrf: csrfIn(page.body), username, password }),
  })
  return { res, cookie: [pre, cookiesFrom(res.headers['set-cookie'])].filter(Boolean).join('; ') }
}

export async function decide(t: CibaTestApp, requestId: string, decision: 'approve' | 'deny', user = { username: 'alice', password: 'alice-pw' }) {
  const { res, cookie } = await signIn(t, requestId, user.username, user.password)
  expect(res.statusCode).toBe(303)
  const consent = await t.app.inject({ method: 'GET', url: `/ciba/approve?request=${requestId}`, headers: { cookie } })
  expect(consent.statusCode).toBe(200)
  return t.app.inject({
    method: 'POST', url: `/ciba/approve/decision?request=${requestId}`, headers: { ...FORM, cookie },
    payload: form({ csrf: csrfIn(consent.body), decision }),
  })
}

export async function lastRequestId(t: CibaTestApp): Promise<string> {
  return t.notifications.at(-1)!.request_id
}
