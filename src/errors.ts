// One error type for the whole protocol surface (RFC 6749 §5.2, RFC 7009 §2.2.1,
// RFC 8707 §2, OpenID CIBA Core §13). Serialized in one place: src/http/error-handler.ts.

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'unsupported_token_type'
  | 'access_denied'
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token'
  | 'unknown_user_id'
  | 'expired_login_hint_token'
  | 'invalid_binding_message'
  | 'missing_user_code'
  | 'invalid_user_code'
  | 'unsupported_response_type'
  | 'login_required'
  | 'interaction_required'
  | 'consent_required'
  | 'invalid_token'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'insufficient_scope'
  | 'not_found'
  | 'method_not_allowed'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'invalid_request_uri'
  | 'invalid_request_object'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'

const STATUS: Partial<Record<OAuthErrorCode, number>> = {
  invalid_client: 401,
  invalid_token: 401,
  insufficient_scope: 403,
  not_found: 404,
  method_not_allowed: 405,
  server_error: 500,
  temporarily_unavailable: 503,
}

export class OAuthError extends Error {
  readonly code: OAuthErrorCode
  readonly status: number
  readonly description: string | undefined
  /** Extra response headers, e.g. WWW-Authenticate for invalid_client over Basic. */
  readonly headers: Readonly<Record<string, string>>
  /**
   * What the error page adds after the description, in the reader's language: it may name what
   * the request sent (the page is shown to whoever sent it). Never in a JSON body or a redirect.
   */
  readonly pageDetail: PageDetail | undefined
  /** Logged with the error's line, to find the cause in one step; never a secret. */
  readonly logFields: Readonly<Record<string, unknown>>

  constructor(
    code: OAuthErrorCode,
    description?: string,
    opts: {
      status?: number
      cause?: unknown
      headers?: Record<string, string>
      pageDetail?: PageDetail
      logFields?: Record<string, unknown>
    } = {},
  ) {
    super(description ?? code, { cause: opts.cause })
    this.name = 'OAuthError'
    this.code = code
    this.description = description
    this.status = opts.status ?? STATUS[code] ?? 400
    this.headers = opts.headers ?? {}
    this.pageDetail = opts.pageDetail
    this.logFields = opts.logFields ?? {}
  }
}

/** A detail the error page words (src/pages/message.ts): the redirect URI sent but not registered. */
export interface PageDetail {
  kind: 'redirect-uri-not-registered'
  /** The redirect URI as the request sent it, cut to its length limit. */
  sent: string
}

/**
 * The database could not be reached, or did not answer within its bound. Answered 503
 * temporarily_unavailable with Retry-After (RFC 6749 §5.2, RFC 9110 §10.2.3); logged once per
 * outage where the outage is noticed (src/db/bounded.ts), never per request.
 */
export class UnavailableError extends Error {
  readonly retryAfterSeconds: number
  constructor(message: string, opts: { cause?: unknown; retryAfterSeconds?: number } = {}) {
    super(message, { cause: opts.cause })
    this.name = 'UnavailableError'
    this.retryAfterSeconds = opts.retryAfterSeconds ?? 5
  }
}

/** True when err, or an error it was caused by, is an UnavailableError. */
export function isUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof UnavailableError) return true
  }
  return false
}
