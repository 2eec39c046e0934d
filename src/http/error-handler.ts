// The one place errors become responses (DESIGN.md wire rules): JSON {error, error_description},
// Cache-Control: no-store and Pragma: no-cache. Anything unexpected becomes server_error;
// its cause is logged and never sent.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { OAuthError } from '../errors.js'

export function toOAuthError(err: unknown): OAuthError {
  if (err instanceof OAuthError) return err
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

/** A finished non-JSON answer raised from a hook, e.g. the HTML page of a rate-limited page route. */
export class HtmlResponseError extends Error {
  constructor(
    readonly statusCode: number,
    readonly headers: Readonly<Record<string, string>>,
    readonly body: string,
  ) {
    super(`HTTP ${statusCode}`)
    this.name = 'HtmlResponseError'
  }
}

export function errorHandler(err: unknown, req: FastifyRequest, reply: FastifyReply) {
  if (err instanceof HtmlResponseError) {
    req.log.info({ status: err.statusCode }, 'page request refused')
    return reply.code(err.statusCode).headers(err.headers).send(err.body)
  }
  const e = toOAuthError(err)
  if (e.status >= 500) req.log.error({ err: e.cause ?? err }, 'request failed')
  else req.log.info({ error: e.code }, e.description ?? e.code)
  return reply.send(sendError(reply, e))
}
