// CORS (Fetch Standard §3.2, "CORS protocol") for browser-based clients, per client as in Duende:
// a client lists the origins its pages are served from (seed field allowedCorsOrigins).
//
// A route opts in with `config: { corsPolicy }`:
// - 'public': readable from any origin (discovery, JWKS: public documents, no credentials).
// - 'client': a preflight is answered for any origin that some enabled client lists; the real
//   answer (errors included, so a browser app can read invalid_grant) carries
//   Access-Control-Allow-Origin only when the client of the request lists the origin. The client
//   of the request is the one named by its credentials (Basic header or client_id in the form),
//   or what the route's `corsClientId` says (userinfo: the client the access token was issued to).
//   When `corsClientId` finds no client (a token that is expired, revoked, not ours, or absent),
//   the answer is an error that holds nothing of anyone's, and the app must read it to know it
//   needs a new token (RFC 6750 §3.1): it is readable by the origins the preflight accepts.
// No cookies are involved (Access-Control-Allow-Credentials is never sent): these endpoints
// authenticate with what the request itself carries.
//
// The headers are written by @fastify/cors; this module only decides which origin each answer
// may name. It runs at preHandler, after the body is parsed, so the client_id is known; answers
// to requests that never reach it (an unparsable body) carry no CORS headers.
import cors from '@fastify/cors'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { isWebOrigin } from '../domain/origin.js'
import type { ClientStore } from '../stores/types.js'
import { readClientCredentials } from './client-auth.js'

export type CorsPolicy = 'public' | 'client'

declare module 'fastify' {
  interface FastifyContextConfig {
    corsPolicy?: CorsPolicy
    /** For corsPolicy 'client': the client of the request when its credentials do not name it. */
    corsClientId?: (req: FastifyRequest) => Promise<string | undefined>
  }
}

/** How long a browser may remember a preflight answer (Chromium caps it at 2 hours). */
export const PREFLIGHT_MAX_AGE = 600

// What a browser app reads besides the body: the Bearer and Basic challenges, and when to retry.
const EXPOSED_HEADERS = 'WWW-Authenticate, Retry-After'
const ALLOWED_HEADERS = 'Authorization, Content-Type'

interface Route {
  policy: CorsPolicy
  methods: string
}

type Options = { origin: string | false; methods?: string; allowedHeaders?: string; exposedHeaders?: string; maxAge?: number }
const NONE: Options = { origin: false }

/** Registers CORS for the routes registered after it that set `config.corsPolicy`. */
export async function registerCors(app: FastifyInstance, deps: { clients: ClientStore }): Promise<void> {
  // Preflights reach @fastify/cors's catch-all OPTIONS route, not the route they ask about, so
  // each opted-in route is remembered by path.
  const routes = new Map<string, Route>()
  app.addHook('onRoute', (route) => {
    const policy = route.config?.corsPolicy
    if (!policy) return
    const methods = [route.method].flat().filter((m) => m !== 'HEAD')
    const known = routes.get(route.url)
    routes.set(route.url, { policy, methods: [...new Set([...(known?.methods.split(', ') ?? []), ...methods])].join(', ') })
  })

  async function decide(req: FastifyRequest): Promise<Options> {
    const origin = req.headers.origin
    if (origin === undefined || !isWebOrigin(origin)) return NONE
    if (req.method === 'OPTIONS') {
      const route = routes.get(pathOf(req.url))
      if (!route) return NONE
      if (route.policy === 'public') return { origin: '*', methods: route.methods, maxAge: PREFLIGHT_MAX_AGE }
      const listed = (await deps.clients.corsOrigins()).includes(origin)
      return listed ? { origin, methods: route.methods, allowedHeaders: ALLOWED_HEADERS, maxAge: PREFLIGHT_MAX_AGE } : NONE
    }
    const config = req.routeOptions.config
    if (config.corsPolicy === 'public') return { origin: '*', exposedHeaders: EXPOSED_HEADERS }
    if (config.corsPolicy !== 'client') return NONE
    const clientId = config.corsClientId ? await config.corsClientId(req) : presentedClientId(req)
    if (clientId === undefined) {
      if (!config.corsClientId) return NONE
      return (await deps.clients.corsOrigins()).includes(origin) ? { origin, exposedHeaders: EXPOSED_HEADERS } : NONE
    }
    const client = await deps.clients.findById(clientId)
    return client?.enabled && client.allowedCorsOrigins.includes(origin) ? { origin, exposedHeaders: EXPOSED_HEADERS } : NONE
  }

  await app.register(cors, {
    hook: 'preHandler',
    // An OPTIONS request without Access-Control-Request-Method gets the preflight answer too,
    // rather than the library's plain-text 400.
    strictPreflight: false,
    // Without an Origin header (every server-side client) nothing is looked up.
    delegator: (req, done) => {
      if (req.headers.origin === undefined) return done(null, NONE)
      decide(req).then(
        (options) => done(null, options),
        // A failed lookup (the database away) costs the browser its CORS headers, not the request.
        (err: unknown) => {
          req.log.warn({ err }, 'CORS: could not load the client; answering without CORS headers')
          done(null, NONE)
        },
      )
    },
  })
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
