// Dynamic Client Registration (RFC 7591 §3) and its management protocol (RFC 7592 §2): a client
// registers itself, gets a client_id (a client_secret when confidential, shown once and stored as
// every client secret is) and a registration access token (stored as SHA-256), with which it
// reads, updates (the token rotates) and deletes its registration. No Fastify here.
import { randomBytes } from 'node:crypto'
import { selfRegisteredClient } from '../../client-auth/self-registered.js'
import type { ClientAuthThrottle } from '../../client-auth/throttle.js'
import type { Config } from '../../config.js'
import type { Clock } from '../../domain/clock.js'
import type { Client } from '../../domain/types.js'
import { REGISTRATION_PATH } from '../../endpoints.js'
import { OAuthError } from '../../errors.js'
import type { AuditSink } from '../../observe/audit.js'
import type { ClientRegistrationStore, Registration, RegistrationTokenStore } from '../../stores/client-registrations.js'
import type { ClientStore } from '../../stores/clients.js'
import { newHandle, secretHash, secretMatches } from '../../tokens/handles.js'
import { readMetadata, type RegisteredMetadata } from './metadata.js'

export interface RegistrationDeps {
  config: Pick<Config, 'issuer' | 'registration' | 'registrationAllowedScopes'>
  clock: Clock
  clients: Pick<ClientStore, 'findById'>
  registrations: ClientRegistrationStore
  tokens: RegistrationTokenStore
  throttle: ClientAuthThrottle
  audit: AuditSink
}

/** Who is asking, for the throttle and the audit log. */
export interface Caller {
  address: string
  requestId: string
}

/** The name under which wrong initial access tokens are counted per address (never a client id's shape). */
const INITIAL_TOKEN = '(initial access token)'

/** RFC 7592 §2.2: members the client may not send in an update. */
const SERVER_MEMBERS = ['registration_access_token', 'registration_client_uri', 'client_secret_expires_at', 'client_id_issued_at']

export function createRegistrationService(deps: RegistrationDeps) {
  const { config, clock, audit } = deps
  const clientUri = (clientId: string) => `${config.issuer}${REGISTRATION_PATH}/${encodeURIComponent(clientId)}`
  const policy = { allowedScopes: config.registrationAllowedScopes }

  /** RFC 6750 §3: no error code when nothing was presented, invalid_token when something wrong was. */
  const unauthorized = (description: string, presented: boolean, extra: Record<string, string> = {}) =>
    new OAuthError('invalid_token', description, {
      status: 401,
      headers: { 'www-authenticate': `Bearer realm="${config.issuer}"${presented ? ', error="invalid_token"' : ''}`, ...extra },
    })

  /** Every check of a token is throttled per name and address, as client secrets are. */
  async function throttled<T>(name: string, caller: Caller, what: string, check: () => Promise<T | undefined>): Promise<T> {
    await deps.throttle.refreshIfStale()
    const blocked = deps.throttle.blockedFor(name, caller.address)
    if (blocked > 0) {
      deps.throttle.refused(name, caller.address, blocked)
      throw unauthorized(`too many wrong ${what}s from this address, retry later`, true, { 'retry-after': String(blocked) })
    }
    const found = await check()
    if (found === undefined) {
      await deps.throttle.recordFailure(name, caller.address, 'bad_secret')
      throw unauthorized(`the ${what} is invalid`, true)
    }
    await deps.throttle.recordSuccess(name, caller.address)
    return found
  }

  const refused = (caller: Caller, err: unknown, clientId?: string): never => {
    if (err instanceof OAuthError) {
      audit.emit({ event: 'registration.refused', clientId, address: caller.address, requestId: caller.requestId, reason: err.code })
    }
    throw err
  }

  /** The registration of `clientId` if `token` is its registration access token (RFC 7592 §2). */
  async function authorize(clientId: string, token: string | undefined, caller: Caller): Promise<Registration> {
    if (token === undefined) throw unauthorized('a registration access token is required', false)
    return throttled(clientId, caller, 'registration access token', () => deps.registrations.findByAccessToken(clientId, token))
  }

  return {
    /** RFC 7591 §3: with REGISTRATION=token, `token` is the initial access token. */
    async register(body: unknown, token: string | undefined, caller: Caller): Promise<Record<string, unknown>> {
      try {
        if (config.registration === 'token') {
          if (token === undefined) throw unauthorized('an initial access token is required', false)
          await throttled(INITIAL_TOKEN, caller, 'initial access token', async () =>
            (await deps.tokens.isUsable(token, clock.now())) ? true : undefined,
          )
        }
        const m = readMetadata(body, policy)
        // Counted only for a registration that is made; a use that raced the last one is refused.
        if (token !== undefined && config.registration === 'token' && !(await deps.tokens.use(token, clock.now()))) {
          throw unauthorized('the initial access token is invalid', true)
        }
        const now = clock.now()
        const clientId = randomBytes(16).toString('base64url')
        // A client that proves itself with its keys (private_key_jwt) is given no secret.
        const secret = usesSecret(m.authMethod) ? newHandle() : undefined
        const accessToken = newHandle()
        await deps.registrations.create(registeredClient(clientId, m, secret), { accessToken, metadata: m.wire, createdAt: now })
        audit.emit({
          event: 'registration.created',
          clientId,
          address: caller.address,
          requestId: caller.requestId,
          scope: m.wire.scope as string,
        })
        return {
          client_id: clientId,
          ...(secret === undefined ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
          client_id_issued_at: Math.floor(now / 1000),
          registration_access_token: accessToken,
          registration_client_uri: clientUri(clientId),
          ...m.wire,
        }
      } catch (err) {
        return refused(caller, err)
      }
    },

    /** RFC 7592 §2.1. */
    async read(clientId: string, token: string | undefined, caller: Caller): Promise<Record<string, unknown>> {
      const r = await authorize(clientId, token, caller)
      return {
        client_id: clientId,
        client_id_issued_at: Math.floor(r.createdAt / 1000),
        registration_client_uri: clientUri(clientId),
        ...r.metadata,
      }
    },

    /** RFC 7592 §2.2: the metadata is replaced as a whole; the registration access token rotates. */
    async update(clientId: string, token: string | undefined, body: unknown, caller: Caller): Promise<Record<string, unknown>> {
      const r = await authorize(clientId, token, caller)
      try {
        const m = await checkUpdate(deps, clientId, r, body)
        const accessToken = newHandle()
        const client = registeredClient(clientId, m, undefined)
        if (!(await deps.registrations.update(client, { previousToken: token!, accessToken, metadata: m.wire }))) {
          throw unauthorized('the registration access token is invalid', true)
        }
        audit.emit({
          event: 'registration.updated',
          clientId,
          address: caller.address,
          requestId: caller.requestId,
          scope: m.wire.scope as string,
        })
        return {
          client_id: clientId,
          client_id_issued_at: Math.floor(r.createdAt / 1000),
          registration_access_token: accessToken,
          registration_client_uri: clientUri(clientId),
          ...m.wire,
        }
      } catch (err) {
        return refused(caller, err, clientId)
      }
    },

    /** RFC 7592 §2.3: the client is gone, and with it everything issued to it. */
    async remove(clientId: string, token: string | undefined, caller: Caller): Promise<void> {
      await authorize(clientId, token, caller)
      if (!(await deps.registrations.remove(clientId))) throw unauthorized('the registration access token is invalid', true)
      audit.emit({ event: 'registration.deleted', clientId, address: caller.address, requestId: caller.requestId })
    },
  }
}

export type RegistrationService = ReturnType<typeof createRegistrationService>

/** RFC 7592 §2.2: what an update may not do, then the metadata checked as at registration. */
async function checkUpdate(deps: RegistrationDeps, clientId: string, r: Registration, body: unknown): Promise<RegisteredMetadata> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OAuthError('invalid_client_metadata', 'the request body must be a JSON object')
  }
  const b = body as Record<string, unknown>
  if (b.client_id !== clientId) throw new OAuthError('invalid_request', 'client_id must be the client_id of this registration')
  if (SERVER_MEMBERS.some((k) => Object.hasOwn(b, k))) {
    throw new OAuthError(
      'invalid_request',
      'an update must not carry registration_access_token, registration_client_uri, client_secret_expires_at or client_id_issued_at',
    )
  }
  if (b.client_secret !== undefined) {
    const client = await deps.clients.findById(clientId)
    const presented = b.client_secret
    if (typeof presented !== 'string' || !client?.secrets.some((s) => secretMatches(presented, s.valueHash))) {
      throw new OAuthError('invalid_request', 'client_secret must be the secret of this client')
    }
  }
  const m = readMetadata(b, { allowedScopes: deps.config.registrationAllowedScopes })
  const before = r.metadata.token_endpoint_auth_method
  if ((m.authMethod === 'private_key_jwt') !== (before === 'private_key_jwt')) {
    // A secret is issued only at registration: a key client turned secret one would have none.
    throw new OAuthError('invalid_client_metadata', 'token_endpoint_auth_method cannot change to or from private_key_jwt')
  }
  if ((m.authMethod === 'none') !== (before === 'none')) {
    throw new OAuthError('invalid_client_metadata', 'token_endpoint_auth_method cannot change between none and a client secret')
  }
  return m
}

/** Whether the method authenticates with a client_secret, which the registration then issues. */
const usesSecret = (method: RegisteredMetadata['authMethod']) => method === 'client_secret_basic' || method === 'client_secret_post'

/** A registered client: a real client, asking the person's consent at first use, PKCE always. */
export function registeredClient(clientId: string, m: RegisteredMetadata, secret: string | undefined): Client {
  return selfRegisteredClient(clientId, 'registration', m, {
    secrets: secret === undefined ? [] : [{ valueHash: secretHash(secret), expiresAt: undefined }],
  })
}
