// The credentials a client presents (RFC 6749 §2.3.1): client_secret_basic (form-urlencoded
// before base64), client_secret_post, or an assertion (RFC 7521 §4.2, RFC 7523 §2.2), one
// method per request (§2.3), and the Basic challenge an invalid_client answer carries when the
// Authorization header was used (§5.2).
import { decodeJwt } from 'jose'
import { checkParameter, DEFAULT_INPUT_LIMIT } from '../domain/input-limits.js'
import { OAuthError } from '../errors.js'
import { CLIENT_ASSERTION_TYPE } from './assertion.js'

export interface PresentedCredentials {
  id: string
  secret: string | undefined
  viaHeader: boolean
  /** The client_assertion (RFC 7521 §4.2), checked by src/client-auth/assertion.ts. */
  assertion?: string | undefined
}

/** `Basic realm="…"` challenge for invalid_client when the Authorization header was used. */
export function basicChallenge(realm: string): Record<string, string> {
  return { 'www-authenticate': `Basic realm="${realm.replace(/["\\]/g, '')}"` }
}

/** RFC 6749 §2.3.1 / Appendix B: the id and secret are form-urlencoded before base64. */
function formDecode(s: string): string | undefined {
  if (s.indexOf('%') < 0 && s.indexOf('+') < 0) return s // the common case: nothing to decode
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '))
  } catch {
    return undefined
  }
}

/**
 * Extracts the client's credentials from the Basic header or the form body, enforcing one
 * method per request and a matching client_id. Undefined when none were presented.
 */
export function readClientCredentials(
  headers: { authorization?: string | undefined },
  form: Record<string, string>,
  challenge: Record<string, string>,
): PresentedCredentials | undefined {
  const auth = headers.authorization
  if (auth !== undefined && auth.length > 6 && auth.slice(0, 6).toLowerCase() === 'basic ') {
    if (form.client_secret !== undefined || form.client_assertion !== undefined) {
      throw new OAuthError('invalid_request', 'more than one client authentication method was used')
    }
    const decoded = Buffer.from(auth.slice(6).trim(), 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    const id = colon > 0 ? formDecode(decoded.slice(0, colon)) : undefined
    const secret = colon > 0 ? formDecode(decoded.slice(colon + 1)) : undefined
    if (!id || secret === undefined || id.length > DEFAULT_INPUT_LIMIT || secret.length > DEFAULT_INPUT_LIMIT) {
      throw new OAuthError('invalid_client', 'malformed Basic credentials', { headers: challenge })
    }
    checkParameter('client_id', id)
    checkParameter('client_secret', secret)
    if (form.client_id !== undefined && form.client_id !== id) {
      throw new OAuthError('invalid_request', 'client_id does not match the Authorization header')
    }
    return { id, secret: secret === '' ? undefined : secret, viaHeader: true }
  }
  if (form.client_assertion !== undefined || form.client_assertion_type !== undefined) return readAssertion(form)
  if (form.client_id === undefined) return undefined
  return { id: form.client_id, secret: form.client_secret, viaHeader: false }
}

const ASSERTION_FAILED = 'client authentication failed'

/**
 * RFC 7521 §4.2: client_assertion with client_assertion_type, no secret beside it. The client is
 * the assertion's sub (RFC 7523 §3 item 2), read before the signature is checked only to find
 * its keys; client_id, when sent, must name the same client (§4.2).
 */
function readAssertion(form: Record<string, string>): PresentedCredentials {
  const assertion = form.client_assertion
  if (assertion === undefined || form.client_assertion_type === undefined) {
    throw new OAuthError('invalid_request', 'client_assertion and client_assertion_type must be sent together')
  }
  if (form.client_secret !== undefined) throw new OAuthError('invalid_request', 'more than one client authentication method was used')
  if (form.client_assertion_type !== CLIENT_ASSERTION_TYPE) throw new OAuthError('invalid_client', 'unsupported client_assertion_type')
  let sub: unknown
  try {
    sub = decodeJwt(assertion).sub
  } catch {
    throw new OAuthError('invalid_client', ASSERTION_FAILED)
  }
  if (typeof sub !== 'string' || sub === '' || sub.length > DEFAULT_INPUT_LIMIT) throw new OAuthError('invalid_client', ASSERTION_FAILED)
  checkParameter('client_id', sub)
  if (form.client_id !== undefined && form.client_id !== sub) throw new OAuthError('invalid_client', ASSERTION_FAILED)
  return { id: sub, secret: undefined, viaHeader: false, assertion }
}
