// The shared sign-in page driven over app.inject the way a browser without JavaScript does it:
// open the page (keeping its cookies), post the credentials with the form's CSRF token.
import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'
import { FORM, form } from './app.js'
import { csrfIn, withCookies } from './http.js'

export const signInPath = (returnTo: string) => `/account/sign-in?return_to=${encodeURIComponent(returnTo)}`

/** Where to sign in: the sign-in page's own location (as a redirect named it), or the page to return to. */
export type SignInAt = { location: string } | { returnTo: string }

/**
 * Opens the sign-in page (with `cookie`, if any), then posts `username` and `password` from it.
 * Returns the POST's answer and the cookies after it (the session cookie, on success).
 */
export async function signInWithForm(app: FastifyInstance, at: SignInAt, username: string, password: string, cookie = '') {
  const url = 'location' in at ? at.location : signInPath(at.returnTo)
  const page = await app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} })
  expect(page.statusCode).toBe(200)
  const jar = withCookies(cookie, page.headers['set-cookie'])
  const res = await app.inject({
    method: 'POST',
    url,
    headers: { ...FORM, cookie: jar },
    payload: form({ csrf: csrfIn(page.body), username, password }),
  })
  return { res, cookie: withCookies(jar, res.headers['set-cookie']) }
}
