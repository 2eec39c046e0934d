// The CIBA approval pages (CIBA Core §7.2, the user's side): GET shows sign-in or the request,
// POST sign-in and POST decision. Plain HTML forms, no JavaScript; session cookie HttpOnly,
// SameSite=Lax, Secure when the issuer is https, Path=/ciba.
import type { RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { parseCookies, serializeCookie } from '../http/cookies.js'
import { readForm } from '../http/form.js'
import { APPROVE_PATH, DECISION_PATH, renderApprovalPage, SIGN_IN_PATH } from '../pages/ciba-approval.js'
import { PAGE_HEADERS } from '../pages/html.js'
import type { ApprovalCookies, ApprovalResult, CibaApproval } from '../services/ciba-approval.js'

export const SESSION_COOKIE = 'authz_ciba_session'
export const CSRF_COOKIE = 'authz_ciba_csrf'
const COOKIE_PATH = '/ciba'

export interface CibaApproveRouteDeps {
  approval: CibaApproval
  /** Secure cookies when the issuer is https. */
  secureCookies: boolean
  /** Per-address limit on the sign-in POST (src/http/rate-limit.ts pageRateLimit); none when undefined. */
  signInRateLimit?: RateLimitOptions | undefined
}

export const cibaApproveRoutes: FastifyPluginAsync<CibaApproveRouteDeps> = async (app, deps) => {
  const cookies = (req: FastifyRequest): ApprovalCookies => {
    const c = parseCookies(req.headers.cookie)
    return { session: c[SESSION_COOKIE], csrf: c[CSRF_COOKIE] }
  }
  const requestId = (req: FastifyRequest) => {
    const q = (req.query as Record<string, unknown>).request
    return typeof q === 'string' && q.length > 0 && q.length <= 100 ? q : undefined
  }
  const secure = deps.secureCookies

  function send(reply: FastifyReply, result: ApprovalResult, id: string | undefined) {
    const setCookies: string[] = []
    if (result.setCsrf) setCookies.push(serializeCookie(CSRF_COOKIE, result.setCsrf, { path: COOKIE_PATH, secure }))
    if (result.setSession) {
      setCookies.push(serializeCookie(SESSION_COOKIE, result.setSession.value, { path: COOKIE_PATH, secure, maxAge: result.setSession.maxAge }))
    }
    if (setCookies.length > 0) reply.header('set-cookie', setCookies)
    if (result.redirect && id) {
      // 303: the browser follows with a GET, so a reload never re-posts the password.
      return reply.code(303).headers({ 'cache-control': 'no-store', location: `${APPROVE_PATH}?request=${encodeURIComponent(id)}` }).send()
    }
    const page = renderApprovalPage(result.page)
    return reply.code(page.status).headers(PAGE_HEADERS).send(page.body)
  }

  // A form that is not a form (or repeats a field) is treated as empty: the page shows the error.
  const formOf = (req: FastifyRequest) => {
    try {
      return readForm(req)
    } catch {
      return {}
    }
  }

  app.get(APPROVE_PATH, async (req, reply) => {
    const id = requestId(req)
    return send(reply, await deps.approval.show(id, cookies(req)), id)
  })
  app.post(SIGN_IN_PATH, { config: { rateLimit: deps.signInRateLimit } }, async (req, reply) => {
    const id = requestId(req)
    return send(reply, await deps.approval.signIn(id, formOf(req), cookies(req), req.ip), id)
  })
  app.post(DECISION_PATH, async (req, reply) => {
    const id = requestId(req)
    return send(reply, await deps.approval.decide(id, formOf(req), cookies(req)), id)
  })
}
