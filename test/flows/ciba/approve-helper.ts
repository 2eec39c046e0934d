// Drives the approval page and the shared sign-in page over app.inject the way a browser without
// JavaScript would: follows the redirect to sign-in, keeps cookies, posts the forms' CSRF tokens.
import { expect } from 'vitest'
import type { CibaTestApp } from './harness.js'
import { FORM, form } from './harness.js'

/** Applies Set-Cookie headers to a Cookie header (a cleared cookie is dropped). */
export function withCookies(cookie: string, setCookie: string | string[] | undefined): string {
  const jar = new Map(cookie.split('; ').filter(Boolean).map((c) => [c.slice(0, c.indexOf('=')), c] as const))
  for (const c of setCookie === undefined ? [] : [setCookie].flat()) {
    const pair = c.split(';')[0]!
    const name = pair.slice(0, pair.indexOf('='))
    if (/;\s*Max-Age=0/i.test(c) || pair === `${name}=`) jar.delete(name)
    else jar.set(name, pair)
  }
  return [...jar.values()].join('; ')
}

export function cookieValue(cookie: string, name: string): string | undefined {
  return cookie.split('; ').find((c) => c.startsWith(`${name}=`))?.slice(name.length + 1)
}

export function csrfIn(html: string): string {
  return /name="csrf" value="([^"]+)"/.exec(html)![1]!
}

export const approvalPath = (requestId: string) => `/ciba/approve?request=${requestId}`
export const signInPath = (returnTo: string) => `/account/sign-in?return_to=${encodeURIComponent(returnTo)}`

/** Opens the sign-in page for `returnTo` and signs in; returns the POST's answer and the cookies after it. */
export async function signInTo(t: Pick<CibaTestApp, 'app'>, returnTo: string, username: string, password: string, cookie = '') {
  const page = await t.app.inject({ method: 'GET', url: signInPath(returnTo), headers: cookie ? { cookie } : {} })
  expect(page.statusCode).toBe(200)
  const jar = withCookies(cookie, page.headers['set-cookie'])
  const res = await t.app.inject({
    method: 'POST', url: signInPath(returnTo), headers: { ...FORM, cookie: jar },
    payload: form({ csrf: csrfIn(page.body), username, password }),
  })
  return { res, cookie: withCookies(jar, res.headers['set-cookie']) }
}

/** GET the approval page (it sends the person to sign-in), sign in, and return the cookies. */
export async function signIn(t: CibaTestApp, requestId: string, username: string, password: string) {
  const page = await t.app.inject({ method: 'GET', url: approvalPath(requestId) })
  expect(page.statusCode).toBe(303)
  expect(page.headers.location).toBe(signInPath(approvalPath(requestId)))
  return signInTo(t, approvalPath(requestId), username, password)
}

/** Posts a decision from the approval page shown with `cookie`. */
export async function decideWith(t: CibaTestApp, requestId: string, decision: 'approve' | 'deny', cookie: string) {
  const shown = await t.app.inject({ method: 'GET', url: approvalPath(requestId), headers: { cookie } })
  expect(shown.statusCode).toBe(200)
  return t.app.inject({
    method: 'POST', url: approvalPath(requestId), headers: { ...FORM, cookie: withCookies(cookie, shown.headers['set-cookie']) },
    payload: form({ csrf: csrfIn(shown.body), decision }),
  })
}

export async function decide(t: CibaTestApp, requestId: string, decision: 'approve' | 'deny', user = { username: 'alice', password: 'alice-pw' }) {
  const { res, cookie } = await signIn(t, requestId, user.username, user.password)
  expect(res.statusCode).toBe(303)
  expect(res.headers.location).toBe(approvalPath(requestId))
  return decideWith(t, requestId, decision, cookie)
}

export async function lastRequestId(t: CibaTestApp): Promise<string> {
  return t.notifications.at(-1)!.request_id
}
