// Form bodies (RFC 6749 §3.2: application/x-www-form-urlencoded, parameters not repeated).
import type { FastifyRequest } from 'fastify'
import { OAuthError } from '../errors.js'
import { checkParameter, parameterLabel, type ParameterErrorCodes } from '../domain/input-limits.js'

const FORM = 'application/x-www-form-urlencoded'

/**
 * The request's form parameters as strings. Not a form POST, a parameter given twice, or a
 * control character in a name or value → invalid_request (or the endpoint's own code for that
 * parameter, from `codes`). Empty values are treated as absent (RFC 6749 §3.1) unless `rejectEmpty`.
 */
export function readForm(req: FastifyRequest, opts: { rejectEmpty?: boolean; codes?: ParameterErrorCodes } = {}): Record<string, string> {
  const type = req.headers['content-type']
  if (typeof type !== 'string' || type.split(';')[0]!.trim().toLowerCase() !== FORM) {
    throw new OAuthError('invalid_request', `the request body must be ${FORM}`)
  }
  const body = req.body
  if (body === undefined || body === null) return {}
  if (typeof body !== 'object') throw new OAuthError('invalid_request', 'malformed request body')
  const out = Object.create(null) as Record<string, string> // no prototype: a parameter named __proto__ is just a key
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (Array.isArray(value)) throw new OAuthError('invalid_request', `${named(key)} is repeated`)
    if (typeof value !== 'string') throw new OAuthError('invalid_request', 'malformed request body')
    checkParameter(key, value, '', opts.codes)
    if (value === '') {
      if (opts.rejectEmpty) throw new OAuthError('invalid_request', `${named(key)} is empty`)
      continue
    }
    out[key] = value
  }
  return out
}

/** `parameter scope` for a parameter we know; never a name the request made up (RFC 6749 §5.2). */
function named(key: string): string {
  return parameterLabel(key) === key ? `parameter ${key}` : 'a parameter'
}
