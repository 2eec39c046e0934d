// Client authentication at the token, PAR, revocation, CIBA and device authorization endpoints:
// RFC 6749 §2.3.1 (client_secret_basic, client_secret_post), §2.3 (one method per request),
// §5.2 (401 + WWW-Authenticate when the Authorization header was used), public clients ('none'),
// and assertions (RFC 7523 §2.2, OpenID Connect Core §9: private_key_jwt, client_secret_jwt).
// A client's tokenEndpointAuthMethod (RFC 7591 §2) fixes the one method it may use; without it,
// a secret by either method, or none for a public client.
import type { Clock } from '../domain/clock.js'
import type { AuthenticatedClient, Client, IntrospectionCaller, TokenEndpointAuthMethod } from '../domain/types.js'
import type { ClientAuthThrottle } from './throttle.js'
import type { ClientStore } from '../stores/clients.js'
import type { ResourceStore } from '../stores/resources.js'
import { AssertionRefused, type AssertionMethod, type AssertionVerifier } from './assertion.js'
import { basicChallenge, readClientCredentials } from './credentials.js'
import { throttledFailures } from './failures.js'
import { createSecretVerifier, sha256 } from './secrets.js'

export interface ClientAuthenticator {
  /** throws OAuthError invalid_client (401, WWW-Authenticate when the header was used) or invalid_request (two methods, mismatched client_id) */
  authenticate(
    headers: { authorization?: string | undefined },
    form: Record<string, string>,
    opts: ClientAuthOptions,
  ): Promise<AuthenticatedClient>
}

/** The request's source address (req.ip) and what the endpoint requires. */
export interface ClientAuthOptions {
  address: string
  requireConfidential?: boolean
  /**
   * The endpoint's path (src/endpoints.ts): an assertion's aud may be its URL instead of the
   * issuer. Several where more than one URL names the endpoint's audience (RFC 9126 §2).
   */
  endpoint?: string | readonly string[]
}

/** The methods an endpoint that authenticates clients this way supports (discovery's *_auth_methods_supported). */
export const CLIENT_AUTH_METHODS: TokenEndpointAuthMethod[] = [
  'client_secret_basic',
  'client_secret_post',
  'client_secret_jwt',
  'private_key_jwt',
  'none',
]

/** Whether a secret presented by Basic or in the body may authenticate the client. */
function secretAllowed(client: Client, viaHeader: boolean): boolean {
  const m = client.tokenEndpointAuthMethod
  return m === undefined || m === (viaHeader ? 'client_secret_basic' : 'client_secret_post')
}

/** Whether the client may identify itself with client_id alone. */
function noneAllowed(client: Client, opts: ClientAuthOptions): boolean {
  if (opts.requireConfidential) return false
  const m = client.tokenEndpointAuthMethod
  return m === undefined ? !client.requireClientSecret : m === 'none'
}

const isAssertionMethod = (m: TokenEndpointAuthMethod | undefined): m is AssertionMethod =>
  m === 'private_key_jwt' || m === 'client_secret_jwt'

export function createClientAuthenticator(deps: {
  clients: ClientStore
  clock: Clock
  realm: string
  throttle: ClientAuthThrottle
  /** Checks client assertions; without it, an assertion never authenticates. */
  assertions?: AssertionVerifier
  /** The issuer, to which the endpoint paths are appended (an assertion's aud); `realm` when omitted. */
  issuer?: string
}): ClientAuthenticator {
  const challenge = basicChallenge(deps.realm)
  const secrets = createSecretVerifier()
  const issuer = deps.issuer ?? deps.realm
  const t = throttledFailures(deps.throttle, challenge, 'client authentication failed')
  return {
    async authenticate(headers, form, opts) {
      const creds = readClientCredentials(headers, form, challenge)
      if (!creds) throw t.error(false, 0, 'client authentication is required')
      await t.refuseIfBlocked(creds, opts.address)
      const client = await deps.clients.findById(creds.id)
      if (!client || !client.enabled) throw await t.failure(creds, opts.address, client ? 'disabled' : 'unknown_client')
      if (creds.assertion !== undefined) {
        const method = client.tokenEndpointAuthMethod
        if (!isAssertionMethod(method) || !deps.assertions) throw await t.failure(creds, opts.address, 'method_not_allowed')
        try {
          const paths = opts.endpoint === undefined ? [] : typeof opts.endpoint === 'string' ? [opts.endpoint] : opts.endpoint
          await deps.assertions.verify(
            client,
            method,
            creds.assertion,
            paths.map((path) => `${issuer}${path}`),
          )
        } catch (err) {
          if (!(err instanceof AssertionRefused)) throw err
          throw await t.failure(creds, opts.address, 'bad_assertion')
        }
        await deps.throttle.recordSuccess(creds.id, opts.address)
        // Each assertion is used once (its jti), so no two requests share this digest.
        return { client, method, viaHeader: false, credentialDigest: sha256(creds.assertion) }
      }
      if (creds.secret === undefined) {
        // A public client identifies itself with client_id alone (method 'none').
        if (!noneAllowed(client, opts)) throw await t.failure(creds, opts.address, 'secret_required')
        return { client, method: 'none', viaHeader: creds.viaHeader, credentialDigest: '' }
      }
      if (!secretAllowed(client, creds.viaHeader)) throw await t.failure(creds, opts.address, 'method_not_allowed')
      const credentialDigest = sha256(creds.secret)
      if (!secrets.matches(client, creds.secret, deps.clock.now(), credentialDigest))
        throw await t.failure(creds, opts.address, 'bad_secret')
      await deps.throttle.recordSuccess(creds.id, opts.address)
      return {
        client,
        method: creds.viaHeader ? 'client_secret_basic' : 'client_secret_post',
        viaHeader: creds.viaHeader,
        credentialDigest,
      }
    },
  }
}

/** Who called the introspection endpoint (RFC 7662 §2.1): an API resource or a client. */
export interface IntrospectionCallerAuthenticator {
  authenticate(
    headers: { authorization?: string | undefined },
    form: Record<string, string>,
    ctx: { address: string },
  ): Promise<IntrospectionCaller>
}

/**
 * RFC 7662 §2.1: the caller MUST authenticate. An API resource (name + one of its secrets) is
 * tried first, then a confidential client whose method allows a secret sent that way; Basic or
 * form body, one method only.
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
      // A client's tokenEndpointAuthMethod (RFC 7591 §2) holds here as at the token endpoint: one
      // fixed to an assertion or to none never authenticates with a secret, however it is sent.
      const methodAllowed = !client || secretAllowed(client, creds.viaHeader)
      if (client && client.enabled && secret !== undefined && methodAllowed && secrets.matches(client, secret, now)) {
        await deps.throttle.recordSuccess(creds.id, address)
        return { kind: 'client', clientId: client.clientId }
      }
      const known = api ?? client
      const reason = !known
        ? 'unknown_client'
        : !known.enabled
          ? 'disabled'
          : secret === undefined
            ? 'secret_required'
            : !methodAllowed
              ? 'method_not_allowed'
              : 'bad_secret'
      throw await t.failure(creds, address, reason)
    },
  }
}
