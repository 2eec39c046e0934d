// Requests over app.inject the way a client or a browser without JavaScript sends them: form
// posts (with Basic credentials or cookies in `headers`), the cookie jar, the forms' CSRF tokens.
import type { FastifyInstance } from 'fastify'
import { basic, FORM, form } from './app.js'

/** POST `url` with `params` form-encoded (and `headers`, e.g. authorization or cookie). */
export function postForm(app: FastifyInstance, url: string, params: Record<string, string>, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url, headers: { ...FORM, ...headers }, payload: form(params) })
}

/** postForm as client `id` authenticating with HTTP Basic (client_secret_basic). */
export function postFormBasic(app: FastifyInstance, url: string, params: Record<string, string>, id: string, secret: string) {
  return postForm(app, url, params, { authorization: basic(id, secret) })
}

/** Applies Set-Cookie headers to a Cookie header (a cleared cookie is dropped). */
export function withCookies(cookie: string, setCookie: string | string[] | undefined): string {
  const jar = new Map(
    cookie
      .split('; ')
      .filter(Boolean)
      .map((c) => [c.slice(0, c.indexOf('=')), c] as const),
  )
  for (const c of setCookie === undefined ? [] : [setCookie].flat()) {
    const pair = c.split(';')[0]!
    const name = pair.slice(0, pair.indexOf('='))
    if (/;\s*Max-Age=0/i.test(c) || pair === `${name}=`) jar.delete(name)
    else jar.set(name, pair)
  }
  return [...jar.values()].join('; ')
}

export function cookieValue(cookie: string, name: string): string | undefined {
  return cookie
    .split('; ')
    .find((c) => c.startsWith(`${name}=`))
    ?.slice(name.length + 1)
}

/** The CSRF token of the (first) form on a page. */
export function csrfIn(html: string): string {
  return /name="csrf" value="([^"]+)"/.exec(html)![1]!
}
