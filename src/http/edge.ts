// The edge of the server: what no route sees. Control characters in a query string or a cookie
// are invalid_request before any route runs (forms and Basic credentials are checked where they
// are read: src/http/form.ts, src/client-auth/authenticators.ts). Errors that Node or Fastify answer
// themselves (unparsable request, headers too large, a malformed URL, a request arriving while
// the server shuts down) answer in OAuth shape with no-store too (RFC 6749 §5.2).
import { STATUS_CODES } from 'node:http'
import { Server, type Socket } from 'node:net'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { OAuthError } from '../errors.js'
import { checkParameter, hasControlCharacters } from '../domain/input-limits.js'

function checkQuery(query: unknown): void {
  if (query === null || typeof query !== 'object') return
  for (const [key, value] of Object.entries(query as Record<string, unknown>)) {
    for (const v of Array.isArray(value) ? value : [value]) if (typeof v === 'string') checkParameter(key, v)
  }
}

/** Our cookies' names; a foreign cookie on the same site is never read, so it is never refused either. */
const OUR_COOKIE = /^(?:__Host-|__Secure-)?authz[-_]/

/** Our cookies' values as a cookie parser decodes them (RFC 6265 §5.4; percent-decoded when valid). */
function checkCookies(header: string | undefined): void {
  if (header === undefined || !header.includes('authz')) return
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0 || !OUR_COOKIE.test(part.slice(0, eq).trim())) continue
    let value = part.slice(eq + 1)
    try {
      value = decodeURIComponent(value)
    } catch {
      // not percent-encoded: a parser keeps it as it is
    }
    if (hasControlCharacters(value)) throw new OAuthError('invalid_request', 'a cookie contains control characters')
  }
}

interface EdgeState {
  draining: boolean
  closing: boolean
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Set by installEdgeChecks; read through startDrain and isDraining. */
    edgeState: EdgeState
  }
}

/**
 * Drain before closing (SHUTDOWN_DRAIN): from now on every answer carries `Connection: close`,
 * so each keep-alive connection ends after its next response at the client's pace instead of
 * being closed under a request racing towards it (an ECONNRESET), and readiness answers 503 so
 * that a proxy moves its traffic. Requests are still served meanwhile.
 */
export function startDrain(app: FastifyInstance): void {
  app.edgeState.draining = true
}

/**
 * Ends a drain: stops accepting new connections first (net.Server's close, which unlike
 * http.Server's does not close idle connections), then lets connections accepted a moment ago
 * present their request for `settleMs` (each answered with Connection: close), and only then
 * closes the app, which closes whatever is still idle. Closing at once would reset connections
 * accepted just before whose request was still on its way.
 */
export async function closeAfterDrain(app: FastifyInstance, settleMs = 250): Promise<void> {
  startDrain(app)
  if (app.server.listening) {
    await new Promise<void>((resolve) => {
      Server.prototype.close.call(app.server, () => resolve())
      setTimeout(resolve, settleMs).unref()
    })
  }
  await app.close()
}

export function isDraining(app: FastifyInstance): boolean {
  return app.edgeState.draining || app.edgeState.closing
}

/**
 * Checks every request's query string and cookies, and answers requests that arrive while the
 * server closes (pipelined or on a busy keep-alive connection) with 503 temporarily_unavailable
 * in OAuth shape, so that a proxy retries them elsewhere. Fastify must be built with
 * `return503OnClosing: false` (its own 503 is not OAuth JSON).
 */
export function installEdgeChecks(app: FastifyInstance): void {
  const state: EdgeState = { draining: false, closing: false }
  app.decorate('edgeState', state)
  app.addHook('preClose', (done) => {
    state.closing = true
    done()
  })
  app.addHook('onSend', (_req, reply, _payload, done) => {
    if (state.draining) reply.header('connection', 'close')
    done()
  })
  app.addHook('onRequest', (req: FastifyRequest, _reply, done) => {
    if (state.closing) {
      done(
        new OAuthError('temporarily_unavailable', 'the server is shutting down, retry the request', {
          status: 503,
          headers: { 'retry-after': '1' },
        }),
      )
      return
    }
    try {
      checkQuery(req.query)
      checkCookies(req.headers.cookie)
    } catch (err) {
      done(err as Error)
      return
    }
    done()
  })
}

const CLIENT_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'the request headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'the request was not received in time'],
}

/** What Node's parser reports with a client error (the clientError event's documented fields). */
type ClientError = NodeJS.ErrnoException & { rawPacket?: unknown; bytesParsed?: number }

/** A request line (RFC 9112 §3): method, target, version. */
const REQUEST_LINE = /(?:^|\n)([!#$%&'*+.^_`|~0-9A-Za-z-]+) [^ \r\n]+ HTTP\/\d\.\d\r?\n/g

/**
 * The method of the request Node could not parse: the last request line among the bytes the
 * parser was reading when it failed (`rawPacket` up to `bytesParsed`). Undefined when there is
 * none there: the line came in an earlier read, or the request timed out (Node keeps no bytes).
 */
function failedMethod(err: ClientError): string | undefined {
  if (!Buffer.isBuffer(err.rawPacket)) return undefined
  const end = Math.min(err.bytesParsed ?? err.rawPacket.length, err.rawPacket.length)
  let method: string | undefined
  for (const line of err.rawPacket.toString('latin1', 0, end).matchAll(REQUEST_LINE)) method = line[1]
  return method
}

/**
 * Fastify's clientErrorHandler: Node could not parse the request (or it timed out), so there is no
 * request object and the answer is written to the socket directly, then the socket is closed.
 */
export function clientErrorHandler(this: FastifyInstance, err: ClientError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const [status, description] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'the request is not valid HTTP']
  this.log.debug({ code: err.code }, 'client error')
  // A response already under way on this socket cannot be followed by another (RFC 9112 §9.3).
  const busy = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true
  if (socket.writable && !busy) {
    const body = JSON.stringify({ error: 'invalid_request', error_description: description })
    // RFC 9110 §9.3.2: the answer to HEAD has a GET's header fields (Content-Length included,
    // §8.6) and no content; bytes after it would be read as the start of another response.
    const content = failedMethod(err) === 'HEAD' ? '' : body
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nPragma: no-cache\r\nConnection: close\r\n\r\n${content}`,
    )
  }
  socket.destroy(err)
}
