// CORS (Fetch Standard §3.2, "CORS protocol") for browser-based clients, per client as in Duende:
// a client lists the origins its pages are served from (seed field allowedCorsOrigins).
//
// A route opts in with `config: { corsPolicy }`:
// - 'public': readable from any origin (discovery, JWKS: public documents, no credentials), the
//   opaque origin `null` included (a sandboxed iframe, a file:// page): `*` covers it (Fetch
//   Standard, "CORS check": `*` succeeds for any request without credentials) and these
//   documents are anyone's to read.
// - 'client': a preflight is answered for any origin that some enabled client lists; the real
//   answer (errors included, so a browser app can read invalid_grant) carries
//   Access-Control-Allow-Origin only when the client of the request lists the origin. The client
//   of the request is the one named by its credentials (Basic header or client_id in the form),
//   or what the route's `corsClientId` says (userinfo: the client the access token was issued to).
//   An answer to a request that names no client (no credentials, credentials that cannot be read,
//   a token that is expired, revoked, not ours, or absent) is an error that holds nothing of
//   anyone's, and the app must read it to know what to do (RFC 6750 §3.1: get a new token): it is
//   readable by the origins the preflight accepts. `null` is never accepted: no client lists it.
// - 'bearer': readable and callable from any origin, `null` included, with the Authorization and
//   Content-Type headers allowed (Dynamic Client Registration, RFC 7591 §3, and its management,
//   RFC 7592 §2: a single-page app registers itself). Open to every origin is safe there because
//   the access is decided by what the request carries, never by ambient authority: an initial
//   access token or registration access token as a Bearer (or nothing, when registration is
//   open to anyone), never a cookie. A page that can call it could make the same request from
//   any machine; the browser only adds its own address, which the rate limit counts as usual.
// No cookies are involved (Access-Control-Allow-Credentials is never sent): these endpoints
// authenticate with what the request itself carries.
//
// Only the opted-in routes pay for this (a hook of their own, not one on every route), and a
// request without an Origin header, as every server-side client sends, one property read. The
// decision runs at preHandler, after the body is parsed, so the client_id is known. Answers
// made before it (the rate limit's 429, a body too large or unparsable, the edge's refusals: none
// knows the client) get the same fallback from an onSend hook on the opted-in routes only, which
// costs the answers that did reach preHandler one boolean test.
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify'
import { isWebOrigin } from '../domain/origin.js'
import { isUnavailable } from '../errors.js'
import type { ClientStore } from '../stores/clients.js'
import { readClientCredentials } from '../client-auth/credentials.js'

export type CorsPolicy = 'public' | 'client' | 'bearer'

declare module 'fastify' {
  interface FastifyContextConfig {
    corsPolicy?: CorsPolicy
    /** For corsPolicy 'client': the client of the request when its credentials do not name it. */
    corsClientId?: (req: FastifyRequest) => Promise<string | undefined>
  }
  interface FastifyRequest {
    /** True once the preHandler step has decided this request's CORS headers. */
    corsDecided: boolean
  }
}

/** How long a browser may remember a preflight answer (Chromium caps it at 2 hours). */
export const PREFLIGHT_MAX_AGE = 600

// What a browser app reads besides the body: the Bearer, DPoP and Basic challenges, when to retry,
// and the next DPoP nonce (RFC 9449 §8). What it sends: its credentials, and its DPoP proof (§4).
const EXPOSED_HEADERS = 'WWW-Authenticate, Retry-After, DPoP-Nonce'
const ALLOWED_HEADERS = 'Authorization, Content-Type, DPoP'

interface Route {
  policy: CorsPolicy
  methods: string
}

type Options = { origin: string | false; methods?: string; allowedHeaders?: string; exposedHeaders?: string; maxAge?: number }
const NONE: Options = { origin: false }
const OPEN: Options = { origin: '*', exposedHeaders: EXPOSED_HEADERS }

/** Whether a route of `policy` may name `origin` at all: a web origin, or for the open policies also `null`. */
function admits(policy: CorsPolicy, origin: string): boolean {
  return isWebOrigin(origin) || (policy !== 'client' && origin === 'null')
}

/**
 * A route's path as a pattern for the paths of its preflights: `:name` (a Fastify parameter)
 * matches one non-empty segment. Only parametric routes need it; the others are looked up as is.
 */
function pathPattern(url: string): RegExp {
  const escaped = url.split('/').map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
  return new RegExp(`^${escaped.join('/')}$`)
}

/** Registers CORS for the routes registered after it that set `config.corsPolicy`. */
export async function registerCors(app: FastifyInstance, deps: { clients: ClientStore }): Promise<void> {
  // Preflights reach the catch-all OPTIONS route below, not the route they ask about, so each
  // opted-in route is remembered by path.
  const routes = new Map<string, Route>()
  const parametric = new Map<string, RegExp>()
  app.decorateRequest('corsDecided', false)
  app.addHook('onRoute', (route) => {
    const policy = route.config?.corsPolicy
    if (!policy) return
    const methods = [route.method].flat().filter((m) => m !== 'HEAD')
    const known = routes.get(route.url)
    routes.set(route.url, { policy, methods: [...new Set([...(known?.methods.split(', ') ?? []), ...methods])].join(', ') })
    if (route.url.includes('/:')) parametric.set(route.url, pathPattern(route.url))
    // New arrays: Fastify copies a GET route's options for its HEAD route, which gets its own.
    // The decision runs first among the route's preHandlers: one that refuses the request (a
    // failed client authentication) still answers with the headers its client's origins allow.
    route.preHandler = [corsHeaders, ...[route.preHandler ?? []].flat()]
    route.onSend = [...[route.onSend ?? []].flat(), earlyAnswers(policy)]
  })

  /** The opted-in route a preflight asks about: by its path, else by a parametric route's pattern. */
  function routeOf(path: string): Route | undefined {
    const exact = routes.get(path)
    if (exact) return exact
    for (const [url, pattern] of parametric) if (pattern.test(path)) return routes.get(url)
    return undefined
  }

  /** An answer that holds nothing of any client's: readable by the origins the preflight accepts. */
  async function namesNoClient(origin: string): Promise<Options> {
    return (await deps.clients.corsOrigins()).includes(origin) ? { origin, exposedHeaders: EXPOSED_HEADERS } : NONE
  }

  async function decide(req: FastifyRequest, origin: string): Promise<Options> {
    if (req.method === 'OPTIONS') {
      const route = routeOf(pathOf(req.url))
      if (!route || !admits(route.policy, origin)) return NONE
      if (route.policy === 'public') return { origin: '*', methods: route.methods, maxAge: PREFLIGHT_MAX_AGE }
      if (route.policy === 'bearer')
        return { origin: '*', methods: route.methods, allowedHeaders: ALLOWED_HEADERS, maxAge: PREFLIGHT_MAX_AGE }
      const listed = (await deps.clients.corsOrigins()).includes(origin)
      return listed ? { origin, methods: route.methods, allowedHeaders: ALLOWED_HEADERS, maxAge: PREFLIGHT_MAX_AGE } : NONE
    }
    const config = req.routeOptions.config
    if (config.corsPolicy === undefined || !admits(config.corsPolicy, origin)) return NONE
    if (config.corsPolicy !== 'client') return OPEN
    const clientId = config.corsClientId ? await config.corsClientId(req) : presentedClientId(req)
    if (clientId === undefined) return namesNoClient(origin)
    const client = await deps.clients.findById(clientId)
    return client?.enabled && client.allowedCorsOrigins.includes(origin) ? { origin, exposedHeaders: EXPOSED_HEADERS } : NONE
  }

  /** The decision, failing safe: a failed lookup (the database away) costs the browser its CORS headers, not the request. */
  async function decideOrNone(req: FastifyRequest, origin: string, msg: string): Promise<Options> {
    try {
      return await decide(req, origin)
    } catch (err) {
      lookupFailed(req, err, msg)
      return NONE
    }
  }

  /**
   * preHandler of an opted-in route, after the body is parsed (so the client_id is known). A
   * request without an Origin header (every server-side client) costs one property read.
   */
  async function corsHeaders(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    req.corsDecided = true
    varyOnOrigin(reply)
    const origin = req.headers.origin
    if (origin === undefined) return
    withCors(reply, await decideOrNone(req, origin, 'CORS: could not load the client; answering without CORS headers'))
  }

  /**
   * onSend of an opted-in route: an answer sent before the preHandler step (an onRequest hook's
   * refusal, a body the parser refused) names no client, so it gets the fallback of `decide`.
   */
  function earlyAnswers(policy: CorsPolicy): onSendHookHandler {
    return function corsEarly(req, reply, payload, done) {
      if (req.corsDecided) return done(null, payload)
      varyOnOrigin(reply)
      const origin = req.headers.origin
      if (origin === undefined || !admits(policy, origin)) return done(null, payload)
      if (policy !== 'client') {
        withCors(reply, OPEN)
        return done(null, payload)
      }
      namesNoClient(origin).then(
        (options) => {
          withCors(reply, options)
          done(null, payload)
        },
        (err: unknown) => {
          lookupFailed(req, err, 'CORS: could not load the allowed origins; answering without CORS headers')
          done(null, payload)
        },
      )
    }
  }

  // Preflights (Fetch Standard §3.2.2): 204 with the methods and headers the route accepts, or,
  // when the origin may not call it, the 404 of a route that is not there. An OPTIONS request
  // without Access-Control-Request-Method gets the same answer (not a plain-text 400).
  app.options('*', async (req, reply) => {
    const origin = req.headers.origin
    const options = origin === undefined ? NONE : await decideOrNone(req, origin, 'CORS: could not load the allowed origins')
    varyOnOrigin(reply)
    if (options.origin === false) return reply.callNotFound()
    withCors(reply, options)
    reply.header('access-control-allow-methods', options.methods)
    if (options.allowedHeaders !== undefined) reply.header('access-control-allow-headers', options.allowedHeaders)
    else {
      // The public documents accept whatever headers the browser asks to send.
      appendVary(reply, 'Access-Control-Request-Headers')
      const asked = req.headers['access-control-request-headers']
      if (asked !== undefined) reply.header('access-control-allow-headers', asked)
    }
    if (options.maxAge !== undefined) reply.header('access-control-max-age', String(options.maxAge))
    // Safari waits for a body on a 204 without Content-Length.
    return reply.code(204).header('content-length', '0').send()
  })
}

/** The headers of a real answer (and the first of a preflight's). */
function withCors(reply: FastifyReply, options: Options): void {
  if (options.origin === false) return
  reply.header('access-control-allow-origin', options.origin)
  if (options.exposedHeaders) reply.header('access-control-expose-headers', options.exposedHeaders)
}

/**
 * A failed lookup costs the browser its CORS headers, not the request. An unreachable database is
 * logged once per outage where it is noticed (src/db/bounded.ts), not once per request here.
 */
function lookupFailed(req: FastifyRequest, err: unknown, msg: string): void {
  if (isUnavailable(err)) req.log.debug(msg)
  else req.log.warn({ err }, msg)
}

/** Vary: Origin (Fetch Standard, "CORS protocol and HTTP caches"), added once. */
function varyOnOrigin(reply: FastifyReply): void {
  appendVary(reply, 'Origin')
}

/** Adds `name` to the Vary header unless it (or `*`) is there already. */
function appendVary(reply: FastifyReply, name: string): void {
  const vary = reply.getHeader('vary')
  if (vary === undefined) reply.header('vary', name)
  else if (!new RegExp(`(?:^|,)\\s*(?:${name}|\\*)\\s*(?:,|$)`, 'i').test(String(vary))) reply.header('vary', `${String(vary)}, ${name}`)
}

function pathOf(url: string): string {
  const q = url.indexOf('?')
  const path = q < 0 ? url : url.slice(0, q)
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path
}

/** The client_id the request's credentials name, without checking them (the route does that). */
function presentedClientId(req: FastifyRequest): string | undefined {
  const body = req.body
  const form = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {}
  try {
    const strings = Object.fromEntries(Object.entries(form).filter((e): e is [string, string] => typeof e[1] === 'string'))
    return readClientCredentials(req.headers, strings, {})?.id
  } catch {
    return undefined
  }
}
