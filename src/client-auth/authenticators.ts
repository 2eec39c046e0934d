// Client authentication at the token, introspection, revocation and CIBA endpoints:
// RFC 6749 §2.3.1 (client_secret_basic, client_secret_post), §2.3 (one method per request),
// §5.2 (401 + WWW-Authenticate when the Authorization header was used), public clients ('none').
import type { Clock } from '../domain/clock.js'
import type { AuthenticatedClient, IntrospectionCaller } from '../domain/types.js'
import type { ClientAuthThrottle } from './throttle.js'
import type { ClientStore } from '../stores/clients.js'
import type { ResourceStore } from '../stores/resources.js'
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
