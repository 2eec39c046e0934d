// The credentials a client presents (RFC 6749 §2.3.1): client_secret_basic (form-urlencoded
// before base64) or client_secret_post, one method per request (§2.3), and the Basic challenge
// an invalid_client answer carries when the Authorization header was used (§5.2).
import { checkParameter, DEFAULT_INPUT_LIMIT } from '../domain/input-limits.js'
import { OAuthError } from '../errors.js'

export interface PresentedCredentials {
  id: string
  secret: string | undefined
  viaHeader: boolean
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
  if (form.client_assertion !== undefined) {
    throw new OAuthError('invalid_client', 'client_assertion is not supported')
  }
  if (form.client_id === undefined) return undefined
  return { id: form.client_id, secret: form.client_secret, viaHeader: false }
}
