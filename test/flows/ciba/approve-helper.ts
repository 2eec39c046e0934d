// Drives the approval page and the shared sign-in page over app.inject the way a browser without
// JavaScript would: follows the redirect to sign-in, keeps cookies, posts the forms' CSRF tokens.
import { expect } from 'vitest'
import type { CibaTestApp } from './harness.js'
import { FORM, form } from '../../helpers/app.js'
import { csrfIn, withCookies } from '../../helpers/http.js'
import { signInPath, signInWithForm } from '../../helpers/sign-in.js'

export const approvalPath = (requestId: string) => `/ciba/approve?request=${requestId}`

/** GET the approval page (it sends the person to sign-in), sign in, and return the cookies. */
export async function signIn(authz: CibaTestApp, requestId: string, username: string, password: string) {
  const page = await authz.app.inject({ method: 'GET', url: approvalPath(requestId) })
  expect(page.statusCode).toBe(303)
  expect(page.headers.location).toBe(signInPath(approvalPath(requestId)))
  return signInWithForm(authz.app, { returnTo: approvalPath(requestId) }, username, password)
}

/** Posts a decision from the approval page shown with `cookie`. */
export async function decideWith(authz: CibaTestApp, requestId: string, decision: 'approve' | 'deny', cookie: string) {
  const shown = await authz.app.inject({ method: 'GET', url: approvalPath(requestId), headers: { cookie } })
  expect(shown.statusCode).toBe(200)
  return authz.app.inject({
    method: 'POST',
    url: approvalPath(requestId),
    headers: { ...FORM, cookie: withCookies(cookie, shown.headers['set-cookie']) },
    payload: form({ csrf: csrfIn(shown.body), decision }),
  })
}

export async function decide(
  authz: CibaTestApp,
  requestId: string,
  decision: 'approve' | 'deny',
  user = { username: 'alice', password: 'alice-pw' },
) {
  const { res, cookie } = await signIn(authz, requestId, user.username, user.password)
  expect(res.statusCode).toBe(303)
  expect(res.headers.location).toBe(approvalPath(requestId))
  return decideWith(authz, requestId, decision, cookie)
}

export async function lastRequestId(authz: CibaTestApp): Promise<string> {
  return authz.notifications.at(-1)!.request_id
}
