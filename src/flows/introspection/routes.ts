// POST /connect/introspect (RFC 7662 §2) with RFC 9701 JWT responses chosen by real content
// negotiation of the Accept header (RFC 9110 §12.5.1), not string equality.
import type { RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { OAuthError } from '../../errors.js'
import type { IntrospectionCallerAuthenticator } from '../../client-auth/authenticators.js'
import { checkInputLengths } from '../../domain/input-limits.js'
import { readForm } from '../../http/form.js'
import type { IntrospectionService } from './service.js'
import { INTROSPECTION_PATH } from '../../endpoints.js'

export const INTROSPECTION_JWT = 'application/token-introspection+jwt'

export interface IntrospectRouteDeps {
  callers: IntrospectionCallerAuthenticator
  introspection: IntrospectionService
  /** Per-address request limit (src/http/rate-limit.ts); none when undefined. */
  rateLimit?: RateLimitOptions | undefined
  /** Metrics: the result of every introspection request. */
  countResult?: (result: 'active' | 'inactive' | 'rejected') => void
}

/** Media ranges of an Accept header with their q-values (malformed q → 0). */
export function parseAccept(accept: string): Array<{ type: string; q: number }> {
  const out: Array<{ type: string; q: number }> = []
  for (const part of accept.split(',')) {
    const [range, ...params] = part.split(';')
    const type = range!.trim().toLowerCase()
    if (type === '') continue
    let q = 1
    for (const p of params) {
      const [k, v] = p.split('=')
      if (k!.trim().toLowerCase() === 'q') {
        const n = Number(v?.trim())
        q = /^\s*(0(\.\d{0,3})?|1(\.0{0,3})?)\s*$/.test(v ?? '') && Number.isFinite(n) ? n : 0
      }
    }
    out.push({ type, q })
  }
  return out
}

// q of the most specific range matching `type` (exact, then type/*, then */*); -1 when none.
function qualityOf(ranges: Array<{ type: string; q: number }>, type: string): { q: number; exact: boolean } {
  const major = `${type.split('/')[0]}/*`
  let best = { q: -1, rank: -1 }
  for (const r of ranges) {
    const rank = r.type === type ? 2 : r.type === major ? 1 : r.type === '*/*' ? 0 : -1
    if (rank > best.rank) best = { q: r.q, rank }
  }
  return { q: best.q, exact: best.rank === 2 }
}

/** RFC 9701 §4: JWT only when asked for by name, with q > 0 and at least JSON's q. */
export function prefersJwtIntrospection(accept: string | undefined): boolean {
  if (accept === undefined || !accept.toLowerCase().includes(INTROSPECTION_JWT)) return false
  const ranges = parseAccept(accept)
  const jwt = qualityOf(ranges, INTROSPECTION_JWT)
  const json = qualityOf(ranges, 'application/json')
  return jwt.exact && jwt.q > 0 && jwt.q >= json.q
}

export const introspectRoutes: FastifyPluginAsync<IntrospectRouteDeps> = async (app, deps) => {
  const count = deps.countResult
  app.post(INTROSPECTION_PATH, { config: { rateLimit: deps.rateLimit } }, async (req, reply) => {
    if (!count) return introspect(req, reply)
    try {
      return await introspect(req, reply)
    } catch (err) {
      count('rejected')
      throw err
    }
  })

  async function introspect(req: FastifyRequest, reply: FastifyReply) {
    const form = readForm(req)
    checkInputLengths(form)
    const caller = await deps.callers.authenticate(req.headers, form, { address: req.ip })
    if (form.token === undefined) throw new OAuthError('invalid_request', 'token is required')
    const answer = await deps.introspection.introspect(caller, form.token, form.token_type_hint)
    count?.(answer.active ? 'active' : 'inactive')
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
    if (prefersJwtIntrospection(req.headers.accept)) {
      reply.type(INTROSPECTION_JWT)
      return deps.introspection.sign(caller, answer)
    }
    return answer
  }
}
