// What the admin routes read from a request: the caller the onRequest hook authenticated, the
// conditional headers, and a query or body parsed with its zod schema (400 with every JSON path).
import type { FastifyRequest } from 'fastify'
import type { z } from 'zod'
import { jsonPath } from '../seed/errors.js'
import type { AdminCaller } from './deps.js'
import type { Preconditions } from './etag.js'
import { invalid } from './problem.js'

declare module 'fastify' {
  interface FastifyRequest {
    adminCaller: AdminCaller | null
  }
}

/** The caller the onRequest hook authenticated. */
export function callerOf(req: FastifyRequest): AdminCaller {
  if (!req.adminCaller) throw new Error('admin request not authenticated')
  return req.adminCaller
}

export function preconditionsOf(req: FastifyRequest): Preconditions {
  const h = (name: string) => {
    const v = req.headers[name]
    return typeof v === 'string' ? v : undefined
  }
  return { ifMatch: h('if-match'), ifNoneMatch: h('if-none-match') }
}

export function parsed<S extends z.ZodType>(schema: S, value: unknown, what: 'query' | 'request body'): z.infer<S> {
  const r = schema.safeParse(value)
  if (!r.success)
    throw invalid(
      r.error.issues.map((i) => ({ path: jsonPath(i.path), detail: i.message })),
      `the ${what} is not valid`,
    )
  return r.data
}
