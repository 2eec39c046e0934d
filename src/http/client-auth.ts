// Client authentication at the token, introspection, revocation and CIBA endpoints:
// RFC 6749 §2.3.1 (client_secret_basic, client_secret_post), §2.3 (one method per request),
// §5.2 (401 + WWW-Authenticate when the Authorization header was used), public clients ('none').
import type { Clock } from '../domain/clock.js'
import type { Client, Secret } from '../domain/types.js'
import { OAuthError } from '../errors.js'
import type { ClientStore, ResourceStore } from '../stores/types.js'
import { secretMatches } from '../tokens/handles.js'

export interface AuthenticatedClient {
  client: Client
  method: 'client_secret_basic' | 'client_secret_post' | 'none'
  viaHeader: boolean
}

export interface PresentedCredentials {
  id: string
  secret: string | undefined
  viaHeader: boolean
}

export interface ClientAuthenticator {
  /** throws OAuthError invalid_client (401, WWW-Authenticate when the header was used) or invalid_request (two methods, mismatched client_id) */
  authenticate(
    headers: { authorization?: string | undefined },
    form: Record<string, string>,
    opts?: { requireConfidential?: boolean },
  ): Promise<AuthenticatedClient>
}

/** Duende's InputLengthRestrictions: most parameters 100 characters, a few longer. */
export const INPUT_LIMITS: Readonly<Record<string, number>> = {
  scope: 300,
  acr_values: 300,
  resource: 512,
  token: 51_200,
  assertion: 51_200,
  client_assertion: 51_200,
  request: 51_200,
  login_hint_token: 4000,
  id_token_hint: 4000,
  binding_message: 300,
  redirect_uri: 400,
  code_verifier: 128,
}
export const DEFAULT_INPUT_LIMIT = 100

/** Bad input never costs more than a 4xx: every parameter has a length limit. */
export function checkInputLengths(form: Record<string, string>, limits: Readonly<Record<string, number>> = INPUT_LIMITS): void {
  for (const key in form) {
    const max = limits[key] ?? DEFAULT_INPUT_LIMIT
    if (form[key]!.length > max) {
      const name = /^[a-z_]{1,40}$/.test(key) ? key : 'parameter'
      throw new OAuthError('invalid_request', `${name} is too long`)
    }
  }
}

/** `Basic realm="…"` challenge for invalid_client when the Authorization header was used. */
export function basicChallenge(realm: string): Record<string, string> {
  return { 'www-authenticate': `Basic realm="${realm.replace(/["\\]/g, '')}"` }
}

/** RFC 6749 §2.3.1 / Appendix B: the id and secret are form-urlencoded before base64. */
function formDecode(s: string): string | undefined {
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

/** Constant-time comparison against every unexpired secret (rotation: several may be valid). */
export function anySecretMatches(presented: string, secrets: readonly Secret[], now: number): boolean {
  let ok = false
  for (const s of secrets) {
    if (s.expiresAt !== undefined && s.expiresAt <= now) continue
    if (secretMatches(presented, s.valueHash)) ok = true
  }
  return ok
}

export function createClientAuthenticator(deps: { clients: ClientStore; clock: Clock; realm: string }): ClientAuthenticator {
  const challenge = basicChallenge(deps.realm)
  return {
    async authenticate(headers, form, opts = {}) {
      const creds = readClientCredentials(headers, form, challenge)
      const fail = (viaHeader: boolean, description = 'client authentication failed') =>
        new OAuthError('invalid_client', description, viaHeader ? { headers: challenge } : {})
      if (!creds) throw fail(false, 'client authentication is required')
      const client = await deps.clients.findById(creds.id)
      if (!client || !client.enabled) throw fail(creds.viaHeader)
      if (creds.secret === undefined) {
        // A public client identifies itself with client_id alone (method 'none').
        if (client.requireClientSecret || opts.requireConfidential) throw fail(creds.viaHeader)
        return { client, method: 'none', viaHeader: creds.viaHeader }
      }
      if (!anySecretMatches(creds.secret, client.secrets, deps.clock.now())) throw fail(creds.viaHeader)
      return { client, method: creds.viaHeader ? 'client_secret_basic' : 'client_secret_post', viaHeader: creds.viaHeader }
    },
  }
}

/** Who called the introspection endpoint (RFC 7662 §2.1): an API resource or a client. */
export type IntrospectionCaller =
  | { kind: 'api'; name: string; scopes: readonly string[] }
  | { kind: 'client'; clientId: string }

/**
 * RFC 7662 §2.1: the caller MUST authenticate. An API resource (name + one of its secrets) is
 * tried first, then a confidential client; Basic or form body, one method only.
 */
export function createIntrospectionCallerAuthenticator(deps: {
  clients: ClientStore
  resources: Pick<ResourceStore, 'findApiResource'>
  clock: Clock
  realm: string
}): { authenticate(headers: { authorization?: string | undefined }, form: Record<string, string>): Promise<IntrospectionCaller> } {
  const challenge = basicChallenge(deps.realm)
  return {
    async authenticate(headers, form) {
      const creds = readClientCredentials(headers, form, challenge)
      const fail = (viaHeader: boolean, description = 'caller authentication failed') =>
        new OAuthError('invalid_client', description, viaHeader ? { headers: challenge } : {})
      if (!creds) throw fail(false, 'caller authentication is required')
      if (creds.secret === undefined) throw fail(creds.viaHeader)
      const now = deps.clock.now()
      const api = await deps.resources.findApiResource(creds.id)
      if (api && api.enabled && anySecretMatches(creds.secret, api.secrets, now)) {
        return { kind: 'api', name: api.name, scopes: api.scopes }
      }
      const client = await deps.clients.findById(creds.id)
      if (client && client.enabled && anySecretMatches(creds.secret, client.secrets, now)) {
        return { kind: 'client', clientId: client.clientId }
      }
      throw fail(creds.viaHeader)
    },
  }
}
