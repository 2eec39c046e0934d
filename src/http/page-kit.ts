// The route helper of every page a person uses: the session and CSRF cookies (@fastify/cookie),
// the CSRF and Origin checks of every form POST, the security headers, errors as pages, and the
// way to the sign-in page. A flow's routes use only this (and its own service and pages).
//
// Cookies: `__Host-authz-session` and `__Host-authz-csrf` (Secure, Path=/, no Domain: a sibling
// subdomain can neither read nor plant them) when the issuer is https or the request came over
// https (behind a trusted proxy: X-Forwarded-Proto); `authz-session` and `authz-csrf` otherwise
// (plain-http development, where browsers refuse the prefix). Both HttpOnly and SameSite=Lax.
// Neither is signed: the session cookie is a random handle the server looks up by its hash, and
// the CSRF cookie only binds tokens that are HMACs under a server secret (src/interaction/csrf.ts).
import cookie from '@fastify/cookie'
import type { RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify'
import type { CsrfTokens } from '../interaction/csrf.js'
import { parseLocalPath } from '../interaction/return-to.js'
import type { Session, SessionService } from '../interaction/session.js'
import type { Page } from '../pages/html.js'
import { layout, pageIn, type LocalizedPage } from '../pages/layout.js'
import type { Look } from '../pages/look.js'
import { formRefusedPage } from '../pages/message.js'
import type { Messages } from '../pages/messages/index.js'
import { signInUrl } from '../pages/sign-in.js'
import { readForm } from './form.js'
import { messagesOf } from './page-locale.js'

export interface PageKitDeps {
  issuer: string
  /** SESSION_LIFETIME: the session cookie's Max-Age. */
  sessionLifetime: number
  sessions: SessionService
  csrf: CsrfTokens
  /** The operator's name, logo, colour and support link (BRAND_*). */
  look: Look
}

export interface PageKit {
  /** The issuer's host. */
  readonly site: string
  /** The operator's look of every page: name, logo, stylesheet, the pages' headers. */
  readonly look: Look
  /** The request's language (ui_locales, else Accept-Language, else English: src/http/page-locale.ts). */
  messages(req: FastifyRequest): Messages
  /** Route options of a page (GET): errors answer as pages. */
  readonly page: RouteShorthandOptions
  /** Route options of a form POST: errors as pages, and the Origin and CSRF checks first. */
  form(rateLimit?: RateLimitOptions): RouteShorthandOptions
  /** The request's live session (its idle deadline moves forward), or undefined. Cached per request. */
  session(req: FastifyRequest): Promise<Session | undefined>
  /** The token for the `csrf` field of a form on the page being rendered; sets the cookie when needed. */
  csrfToken(req: FastifyRequest, reply: FastifyReply): string
  /** The request's form fields (page errors for a body that is not a form). */
  formOf(req: FastifyRequest): Record<string, string>
  /**
   * Sends a page in the layout, in the request's language, with the security headers (plus
   * origins the form may lead to).
   */
  send(reply: FastifyReply, page: Page | LocalizedPage, opts?: { formActionOrigins?: readonly string[] }): FastifyReply
  /** 303 to the sign-in page, which returns to `returnTo` (a path of a flow registered with ReturnTargets). */
  toSignIn(reply: FastifyReply, returnTo: string): FastifyReply
  /** After a sign-in: the new session's cookie, and a new CSRF binding (tokens from before stop working). */
  setSession(req: FastifyRequest, reply: FastifyReply, handle: string): void
  /** The session cookie's value, for SessionService.start/end. */
  sessionHandle(req: FastifyRequest): string | undefined
  /** Ends the session, clears its cookie and replaces the CSRF binding; returns the session as it was. */
  endSession(req: FastifyRequest, reply: FastifyReply): Promise<Session | undefined>
  /**
   * A random value this browser holds in its own cookie (set when missing): binds a sign-in sent
   * to another site to the browser that started it (src/flows/federation). Not replaced at sign-in.
   */
  browserBinding(req: FastifyRequest, reply: FastifyReply): string
  /** The browser's binding as its cookie presents it, if it is one we could have set. */
  presentedBinding(req: FastifyRequest): string | undefined
}

/** Registers @fastify/cookie (parsing on demand only: the API endpoints never pay for it). */
export async function registerCookies(app: FastifyInstance): Promise<void> {
  await app.register(cookie, { hook: false })
}

export function createPageKit(app: FastifyInstance, deps: PageKitDeps): PageKit {
  const issuerUrl = new URL(deps.issuer)
  const issuerHttps = issuerUrl.protocol === 'https:'
  const sessionCache = new WeakMap<FastifyRequest, Promise<Session | undefined>>()
  const bindings = new WeakMap<FastifyRequest, string>() // a binding set during this request

  const secure = (req: FastifyRequest) => issuerHttps || req.protocol === 'https'
  const names = (req: FastifyRequest) =>
    secure(req)
      ? { session: '__Host-authz-session', csrf: '__Host-authz-csrf', browser: '__Host-authz-browser' }
      : { session: 'authz-session', csrf: 'authz-csrf', browser: 'authz-browser' }
  const cookieOpts = (req: FastifyRequest) => ({ path: '/', httpOnly: true, sameSite: 'lax' as const, secure: secure(req) })
  const cookies = (req: FastifyRequest): Record<string, string | undefined> =>
    (req.cookies ??= req.headers.cookie ? app.parseCookie(req.headers.cookie) : {})
  const binding = (req: FastifyRequest) => bindings.get(req) ?? cookies(req)[names(req).csrf]

  function newBinding(req: FastifyRequest, reply: FastifyReply): string {
    const value = deps.csrf.newBinding()
    bindings.set(req, value)
    reply.setCookie(names(req).csrf, value, cookieOpts(req))
    return value
  }

  /** Same origin as the issuer or as the URL the browser asked for; see docs/security.md "Sign-in, sessions and forms". */
  function sameOrigin(req: FastifyRequest): boolean {
    // Fetch metadata (all current browsers): anything but same-origin is refused, including
    // same-site (a sibling subdomain) and none.
    const site = req.headers['sec-fetch-site']
    if (site !== undefined && site !== 'same-origin') return false
    const origin = req.headers.origin
    // No Origin: not a browser, or one too old to send it; the CSRF token decides alone.
    if (origin === undefined) return true
    return origin === issuerUrl.origin || origin === `${req.protocol}://${req.host}`
  }

  /** A local link back to the page that showed the form (forms post to their page's URL). */
  const retryHref = (req: FastifyRequest) => {
    const url = parseLocalPath(req.url)
    return url ? `${url.pathname}${url.search}` : '/'
  }

  const browsers = new WeakMap<FastifyRequest, string>() // a browser binding set during this request

  const kit: PageKit = {
    site: issuerUrl.host,
    look: deps.look,
    messages: messagesOf,
    page: { config: { errorMode: 'page' } },
    form(rateLimit) {
      return {
        config: { errorMode: 'page', ...(rateLimit ? { rateLimit } : {}) },
        preHandler: async (req, reply) => {
          const crossSite = !sameOrigin(req)
          if (crossSite || !deps.csrf.verify(binding(req), kit.formOf(req).csrf)) {
            req.log.info({ reason: crossSite ? 'cross-site' : 'csrf-token', origin: req.headers.origin }, 'form refused')
            return kit.send(reply, formRefusedPage(crossSite ? 'cross-site' : 'token', retryHref(req)))
          }
        },
      }
    },
    session(req) {
      let found = sessionCache.get(req)
      if (!found) sessionCache.set(req, (found = deps.sessions.use(kit.sessionHandle(req))))
      return found
    },
    csrfToken(req, reply) {
      const current = binding(req)
      return deps.csrf.token(deps.csrf.isBinding(current) ? current : newBinding(req, reply))
    },
    formOf: (req) => readForm(req),
    send(reply, page, opts) {
      const m = messagesOf(reply.request)
      const shown = pageIn(page, m)
      return reply
        .code(shown.status)
        .headers({
          ...deps.look.headers(opts?.formActionOrigins, { scripts: (shown.scripts ?? []).length > 0 }),
          'content-language': m.locale,
        })
        .send(layout(shown, deps.look, m))
    },
    toSignIn(reply, returnTo) {
      return reply
        .code(303)
        .headers({ location: signInUrl(returnTo), 'cache-control': 'no-store' })
        .send()
    },
    setSession(req, reply, handle) {
      reply.setCookie(names(req).session, handle, { ...cookieOpts(req), maxAge: deps.sessionLifetime })
      newBinding(req, reply)
    },
    sessionHandle: (req) => cookies(req)[names(req).session],
    async endSession(req, reply) {
      const ended = await deps.sessions.end(kit.sessionHandle(req))
      reply.clearCookie(names(req).session, cookieOpts(req))
      newBinding(req, reply)
      sessionCache.set(req, Promise.resolve(undefined))
      return ended
    },
    browserBinding(req, reply) {
      const current = kit.presentedBinding(req) ?? browsers.get(req)
      if (current) return current
      const value = deps.csrf.newBinding()
      browsers.set(req, value)
      reply.setCookie(names(req).browser, value, cookieOpts(req))
      return value
    },
    presentedBinding(req) {
      const value = cookies(req)[names(req).browser]
      return deps.csrf.isBinding(value) ? value : undefined
    },
  }
  return kit
}

/** Every HTML response carries the page security headers, whichever code path produced it. */
export function registerPageHeaders(app: FastifyInstance, look: Look): void {
  const headers = look.headers()
  const entries = Object.entries(headers)
  app.addHook('onSend', (_req, reply, payload, done) => {
    const type = reply.getHeader('content-type')
    if (typeof type === 'string' && type.startsWith('text/html')) {
      for (const [name, value] of entries) if (!reply.hasHeader(name)) reply.header(name, value)
    }
    done(null, payload)
  })
}
