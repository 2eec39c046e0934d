// Client authentication at the token, introspection, revocation and CIBA endpoints:
// RFC 6749 §2.3.1 (client_secret_basic, client_secret_post), §2.3 (one method per request),
// §5.2 (401 + WWW-Authenticate when the Authorization header was used), public clients ('none').
import * as nodeCrypto from 'node:crypto'
import type { Clock } from '../domain/clock.js'
import type { AuthenticatedClient, Client, IntrospectionCaller, Secret } from '../domain/types.js'
import { OAuthError } from '../errors.js'
import type { ClientAuthThrottle } from './throttle.js'
import { checkParameter, DEFAULT_INPUT_LIMIT } from '../domain/input-limits.js'
import type { ClientStore } from '../stores/clients.js'
import type { ResourceStore } from '../stores/resources.js'
import { secretMatches } from '../tokens/handles.js'
import { throttledFailures } from './failures.js'

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
    opts: ClientAuthOptions,
  ): Promise<AuthenticatedClient>
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

/**
 * Constant-time comparison against every unexpired secret (rotation: several may be valid): the latest
 * expiry (ms; Infinity: none) among those `presented` matches; undefined: no match.
 */
function matchedUntil(presented: string, secrets: readonly Secret[], now: number): number | undefined {
  let until: number | undefined
  for (const s of secrets) {
    if (s.expiresAt !== undefined && s.expiresAt <= now) continue
    if (secretMatches(presented, s.valueHash)) until = Math.max(until ?? -Infinity, s.expiresAt ?? Infinity)
  }
  return until
}

// One-shot crypto.hash (Node ≥ 20.12) costs a fifth of createHash() for short inputs.
const sha256 = (value: string): string =>
  typeof nodeCrypto.hash === 'function'
    ? nodeCrypto.hash('sha256', value, 'base64')
    : nodeCrypto.createHash('sha256').update(value).digest('base64')

/** Successful secrets remembered per stored record; an attacker without a valid secret adds nothing. */
const MAX_VERIFIED_PER_RECORD = 16

export interface SecretVerifier {
  /**
   * Whether `presented` matches an unexpired secret, remembering a match for as long as the store
   * keeps returning `record`. `digest`: sha256(presented), when the caller has computed it already.
   */
  matches(record: { readonly secrets: readonly Secret[] }, presented: string, now: number, digest?: string): boolean
}

/**
 * Hot-path secret checks. A match is remembered against the record object the cached store
 * returned (WeakMap), as SHA-256(secret) → that secret's expiry. When the store's cache reloads
 * (CLIENT_CACHE_TTL) it returns a new object and everything is checked afresh, so a removed
 * secret stops working exactly when the client cache says so, and an expired one at once.
 * Without a cache (TTL 0) every lookup returns a new object and nothing is ever reused.
 */
export function createSecretVerifier(): SecretVerifier {
  const verified = new WeakMap<object, Map<string, number>>()
  return {
    matches(record, presented, now, digest) {
      const known = verified.get(record)
      const key = digest ?? sha256(presented)
      const until = known?.get(key)
      if (until !== undefined) return until > now
      const matched = matchedUntil(presented, record.secrets, now)
      if (matched === undefined) return false
      if (!known) verified.set(record, new Map([[key, matched]]))
      else if (known.size < MAX_VERIFIED_PER_RECORD) known.set(key, matched)
      return true
    },
  }
}

/** The request's source address (req.ip) and what the endpoint requires. */
export interface ClientAuthOptions {
  address: string
  requireConfidential?: boolean
}

export function createClientAuthenticator(deps: {
  clients: ClientStore
  clock: Clock
  realm: string
  throttle: ClientAuthThrottle
}): ClientAuthenticator {
  const challenge = basicChallenge(deps.realm)
  const secrets = createSecretVerifier()
  const t = throttledFailures(deps.throttle, challenge, 'client authentication failed')
  return {
    async authenticate(headers, form, opts) {
      const creds = readClientCredentials(headers, form, challenge)
      if (!creds) throw t.error(false, 0, 'client authentication is required')
      await t.refuseIfBlocked(creds, opts.address)
      const client = await deps.clients.findById(creds.id)
      if (!client || !client.enabled) throw await t.failure(creds, opts.address, client ? 'disabled' : 'unknown_client')
      if (creds.secret === undefined) {
        // A public client identifies itself with client_id alone (method 'none').
        if (client.requireClientSecret || opts.requireConfidential) throw await t.failure(creds, opts.address, 'secret_required')
        return { client, method: 'none', viaHeader: creds.viaHeader, credentialDigest: '' }
      }
      const credentialDigest = sha256(creds.secret)
      if (!secrets.matches(client, creds.secret, deps.clock.now(), credentialDigest)) throw await t.failure(creds, opts.address, 'bad_secret')
      await deps.throttle.recordSuccess(creds.id, opts.address)
      return { client, method: creds.viaHeader ? 'client_secret_basic' : 'client_secret_post', viaHeader: creds.viaHeader, credentialDigest }
    },
  }
}

/** Who called the introspection endpoint (RFC 7662 §2.1): an API resource or a client. */
export interface IntrospectionCallerAuthenticator {
  authenticate(headers: { authorization?: string | undefined }, form: Record<string, string>, ctx: { address: string }): Promise<IntrospectionCaller>
}

/**
 * RFC 7662 §2.1: the caller MUST authenticate. An API resource (name + one of its secrets) is
 * tried first, then a confidential client; Basic or form body, one method only.
 */

export function createIntrospectionCallerAuthenticator(deps: {
  clients: ClientStore
  resources: Pick<ResourceStore, 'findApiResource'>
  clock: Clock
  realm: string
  throttle: ClientAuthThrottle
}): IntrospectionCallerAuthenticator {
  const challenge = basicChallenge(deps.realm)
  const secrets = createSecretVerifier()
  const t = throttledFailures(deps.throttle, challenge, 'caller authentication failed')
  return {
    async authenticate(headers, form, { address }) {
      const creds = readClientCredentials(headers, form, challenge)
      if (!creds) throw t.error(false, 0, 'caller authentication is required')
      await t.refuseIfBlocked(creds, address)
      const secret = creds.secret
      const now = deps.clock.now()
      const api = await deps.resources.findApiResource(creds.id)
      if (api && api.enabled && secret !== undefined && secrets.matches(api, secret, now)) {
        await deps.throttle.recordSuccess(creds.id, address)
        return { kind: 'api', name: api.name, scopes: api.scopes }
      }
      const client = await deps.clients.findById(creds.id)
      if (client && client.enabled && secret !== undefined && secrets.matches(client, secret, now)) {
        await deps.throttle.recordSuccess(creds.id, address)
        return { kind: 'client', clientId: client.clientId }
      }
      const known = api ?? client
      const reason = !known ? 'unknown_client' : !known.enabled ? 'disabled' : secret === undefined ? 'secret_required' : 'bad_secret'
      throw await t.failure(creds, address, reason)
    },
  }
}
