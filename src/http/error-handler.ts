// The one place errors become responses. The route chooses how (its `config.errorMode`):
// - 'oauth' (the default: API endpoints): JSON {error, error_description} with Cache-Control:
//   no-store and Pragma: no-cache (RFC 6749 §5.2);
// - 'page' (pages a person uses): an HTML page with the status and a human sentence;
// - 'redirect' (the authorization endpoint): once the route has validated the client's redirect
//   URI and called setErrorRedirect(), a 303 to it with error, error_description, state and iss
//   (RFC 6749 §4.1.2.1, RFC 9207); before that (unknown client, unregistered redirect URI: never
//   redirect there, RFC 6749 §4.1.2.1 and §10.15) the error page.
// Anything unexpected becomes server_error; its cause is logged and never sent.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isUnavailable, OAuthError, UnavailableError } from '../errors.js'
import { formPostResponse } from '../pages/form-post.js'
import type { Page } from '../pages/html.js'
import { layout, pageIn, type LocalizedPage } from '../pages/layout.js'
import type { Look } from '../pages/look.js'
import { errorPage } from '../pages/message.js'
import { messagesOf } from './page-locale.js'

export type ErrorMode = 'oauth' | 'page' | 'redirect'

/** A redirect URI the route has validated for this request, and the request's state. */
export interface ErrorRedirect {
  redirectUri: string
  state?: string | undefined
  /** OAuth 2.0 Form Post Response Mode: the error is posted by a self-submitting form. */
  responseMode?: 'query' | 'form_post' | undefined
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** How errors of this route are answered; 'oauth' when unset. */
    errorMode?: ErrorMode
  }
  interface FastifyRequest {
    errorRedirect: ErrorRedirect | null
  }
}

/** Redirect mode: errors of this request go back to `target` (validated by the route) from now on. */
export function setErrorRedirect(req: FastifyRequest, target: ErrorRedirect): void {
  req.errorRedirect = target
}

export function toOAuthError(err: unknown): OAuthError {
  if (err instanceof OAuthError) return err
  if (isUnavailable(err)) {
    const retryAfter = err instanceof UnavailableError ? err.retryAfterSeconds : 5
    return new OAuthError('temporarily_unavailable', 'the service is temporarily unavailable, retry the request', {
      status: 503,
      headers: { 'retry-after': String(retryAfter) },
      cause: err,
    })
  }
  const fe = err as Partial<FastifyError> | undefined
  const status = typeof fe?.statusCode === 'number' ? fe.statusCode : 500
  if (status >= 400 && status < 500) {
    // Fastify's own 4xx: bad JSON, unsupported media type, body too large, bad content length…
    return new OAuthError('invalid_request', describeFastifyError(fe), { cause: err })
  }
  return new OAuthError('server_error', undefined, { cause: err })
}

function describeFastifyError(fe: Partial<FastifyError> | undefined): string {
  switch (fe?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'request body too large'
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'unsupported content type: use application/x-www-form-urlencoded'
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return 'malformed request body'
    default:
      return 'malformed request'
  }
}

export function sendError(reply: FastifyReply, e: OAuthError) {
  reply
    .code(e.status)
    .headers(e.headers)
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .type('application/json; charset=utf-8')
  return {
    error: e.code,
    ...(e.status < 500 && e.description !== undefined ? { error_description: e.description } : {}),
  }
}

/** A page to answer with, raised from a hook (e.g. the 429 page of a rate-limited page route). */
export class PageResponseError extends Error {
  constructor(
    readonly page: Page | LocalizedPage,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super('page response')
    this.name = 'PageResponseError'
  }
}

/** The error parameters of RFC 6749 §4.1.2.1 with RFC 9207's iss. */
export function errorResponseParams(target: ErrorRedirect, e: OAuthError, issuer: string): Record<string, string> {
  const out: Record<string, string> = { error: e.code }
  if (e.status < 500 && e.description !== undefined) out.error_description = e.description
  if (target.state !== undefined) out.state = target.state
  out.iss = issuer
  return out
}

/** The redirect URI with `params` added to its query (RFC 6749 §4.1.2: any query it has is kept). */
export function withQuery(redirectUri: string, params: Record<string, string>): string {
  const url = new URL(redirectUri)
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  return url.href
}

/** The error URL of RFC 6749 §4.1.2.1 with RFC 9207's iss. */
export function errorRedirectUrl(target: ErrorRedirect, e: OAuthError, issuer: string): string {
  return withQuery(target.redirectUri, errorResponseParams(target, e, issuer))
}

export interface ErrorHandlerOptions {
  issuer: string
  /** The look of error pages (src/pages/look.ts). */
  look: Look
}

export function createErrorHandler(opts: ErrorHandlerOptions) {
  const sendPage = (
    req: FastifyRequest,
    reply: FastifyReply,
    page: Page | LocalizedPage,
    headers: Readonly<Record<string, string>> = {},
  ) => {
    const m = messagesOf(req)
    const shown = pageIn(page, m)
    return reply
      .code(shown.status)
      .headers({ ...opts.look.headers(), 'content-language': m.locale, ...headers })
      .send(layout(shown, opts.look, m))
  }

  return function errorHandler(err: unknown, req: FastifyRequest, reply: FastifyReply) {
    if (err instanceof PageResponseError) {
      req.log.info({ status: pageIn(err.page, messagesOf(req)).status }, 'page request refused')
      return sendPage(req, reply, err.page, err.headers)
    }
    const e = toOAuthError(err)
    // An unreachable database is logged once per outage where it is noticed (src/db/bounded.ts).
    if (e.code === 'temporarily_unavailable') req.log.debug({ error: e.code }, 'request answered 503')
    else if (e.status >= 500) req.log.error({ err: e.cause ?? err }, 'request failed')
    else req.log.info({ error: e.code, ...e.logFields }, e.description ?? e.code)
    const mode = req.routeOptions.config?.errorMode ?? 'oauth'
    if (mode === 'redirect' && req.errorRedirect?.responseMode === 'form_post') {
      const { headers, body } = formPostResponse(
        req.errorRedirect.redirectUri,
        errorResponseParams(req.errorRedirect, e, opts.issuer),
        opts.look,
        messagesOf(req),
      )
      return reply.code(200).headers(headers).send(body)
    }
    if (mode === 'redirect' && req.errorRedirect) {
      return reply
        .code(303)
        .headers({ location: errorRedirectUrl(req.errorRedirect, e, opts.issuer), 'cache-control': 'no-store' })
        .send()
    }
    if (mode !== 'oauth') {
      const page = errorPage({ status: e.status, code: e.code, description: e.description, detail: e.pageDetail })
      return sendPage(req, reply, page, e.headers)
    }
    return reply.send(sendError(reply, e))
  }
}

/** Installs the error handler and the per-request redirect slot. */
export function registerErrorHandling(app: FastifyInstance, opts: ErrorHandlerOptions): void {
  app.decorateRequest('errorRedirect', null)
  app.setErrorHandler(createErrorHandler(opts))
}
