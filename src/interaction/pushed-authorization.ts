// Where an authorization request's parameters come from (RFC 9126, RFC 9101), for the
// authorization endpoint and the pushed authorization request endpoint alike:
// - the URL itself;
// - a request_uri of ours (`urn:ietf:params:oauth:request_uri:<handle>`) with client_id: a
//   request pushed by that client, held 60 seconds for its first arrival here (RFC 9126 §2.2);
//   from that arrival the person has SIGN_IN_WINDOW_SECONDS to sign in and decide, and it is
//   used up when a code is issued from it (§4: a reload before that is allowed);
// - a request object by value (`request`) with client_id: only the parameters inside count
//   (RFC 9101 §5). Once verified it is held for a request_uri like a pushed request, so that the
//   way back from the sign-in page and the consent screen names it without replaying its jti.
// An unknown request_uri, or another client's, is invalid_request_uri and a failing request
// object invalid_request_object; both are a page, for the redirect URI and state they would give
// are not known good. An expired or used one is refused back at its redirect URI.
import type { Clock } from '../domain/clock.js'
import type { Client } from '../domain/types.js'
import { OAuthError } from '../errors.js'
import type { PushedRequestStore } from '../stores/pushed-requests.js'
import { newHandle } from '../tokens/handles.js'
import { collect, resolveClient, type RawParams } from './authorization-request.js'
import type { RequestObjectVerifier } from './request-object.js'
import type { ClientStore } from '../stores/clients.js'

export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:'
/** RFC 9126 §2.2 expires_in: how long a pushed request waits for its first arrival. */
export const PUSHED_REQUEST_LIFETIME_SECONDS = 60
/** From its first arrival at the authorization endpoint: the time to sign in and decide. */
export const SIGN_IN_WINDOW_SECONDS = 600
/** Client authentication parameters (RFC 6749 §2.3.1, RFC 7523 §2.2): never part of a held request. */
export const CLIENT_AUTH_PARAMS = ['client_secret', 'client_assertion', 'client_assertion_type']

/** How the request arrived: what requirePushedAuthorization, PAR_REQUIRED and requireRequestObject ask about. */
export interface RequestOrigin {
  viaPar: boolean
  signed: boolean
}

export interface AuthorizationInput extends RequestOrigin {
  /** The request's parameters: the held request's, else the URL's. */
  params: RawParams
  /** The URL's own parameters, which the way back from sign-in and consent repeats. */
  url: RawParams
  /** The handle of the request_uri the request is held for. */
  handle: string | undefined
  /** Held, but expired or used: refused once its redirect URI is known. */
  spent: boolean
}

export interface AuthorizationInputDeps {
  clock: Clock
  clients: Pick<ClientStore, 'findById'>
  pushed: PushedRequestStore
  requestObjects: RequestObjectVerifier
}

export interface AuthorizationInputs {
  /** At the authorization endpoint: where the parameters come from. Throws page errors. */
  resolve(raw: RawParams): Promise<AuthorizationInput>
  /** For the sign-in page: the parameters behind an authorization URL, read only; undefined if none. */
  peek(raw: RawParams): Promise<RawParams | undefined>
  /** Holds validated parameters for a new request_uri; returns it. */
  hold(client: Client, params: RawParams, origin: RequestOrigin): Promise<string>
}

/** The handle of a request_uri of ours; undefined for any other URI. */
export function requestUriHandle(uri: string): string | undefined {
  if (!uri.startsWith(REQUEST_URI_PREFIX)) return undefined
  const handle = uri.slice(REQUEST_URI_PREFIX.length)
  return /^[A-Za-z0-9_-]{43}$/.test(handle) ? handle : undefined
}

/**
 * RFC 9126 §5 and RFC 9101 §10.5 via the client's settings: PAR required (by the client or
 * PAR_REQUIRED) but not used, or a request object required but not sent: invalid_request.
 */
export function checkRequestOrigin(client: Client, origin: RequestOrigin, parRequired: boolean): void {
  if ((parRequired || client.requirePushedAuthorization) && !origin.viaPar) {
    throw new OAuthError('invalid_request', 'pushed authorization requests are required: use the pushed authorization request endpoint')
  }
  if (client.requireRequestObject && !origin.signed) {
    throw new OAuthError('invalid_request', 'a signed request object is required')
  }
}

const unknownUri = () => new OAuthError('invalid_request_uri', 'request_uri is unknown or not issued to this client')

export function createAuthorizationInputs(deps: AuthorizationInputDeps): AuthorizationInputs {
  const { clock } = deps

  async function hold(client: Client, params: RawParams, origin: RequestOrigin): Promise<string> {
    const handle = newHandle()
    const now = clock.now()
    await deps.pushed.create({
      handle,
      clientId: client.clientId,
      params: params.filter(([k]) => !CLIENT_AUTH_PARAMS.includes(k)),
      ...origin,
      createdAt: now,
      expiresAt: now + PUSHED_REQUEST_LIFETIME_SECONDS * 1000,
    })
    return `${REQUEST_URI_PREFIX}${handle}`
  }

  return {
    hold,

    async resolve(raw) {
      const { params, repeated } = collect(raw)
      const uri = params.get('request_uri')
      const object = params.get('request')
      if (uri === undefined && object === undefined && !repeated.includes('request_uri') && !repeated.includes('request')) {
        return { params: raw, url: raw, handle: undefined, viaPar: false, signed: false, spent: false }
      }
      const client = await resolveClient(deps.clients, raw)
      if (repeated.includes('request_uri') || repeated.includes('request')) {
        throw new OAuthError('invalid_request', 'request or request_uri is repeated')
      }
      if (uri !== undefined && object !== undefined) throw new OAuthError('invalid_request', 'request and request_uri cannot both be given')
      if (uri !== undefined) {
        const handle = requestUriHandle(uri)
        if (handle === undefined) throw unknownUri() // no URIs but ours (request_uri_parameter_supported: false)
        const now = clock.now()
        const held = await deps.pushed.open(handle, now, SIGN_IN_WINDOW_SECONDS * 1000)
        if (!held || held.clientId !== client.clientId) throw unknownUri()
        const spent = held.usedAt !== undefined || held.expiresAt <= now
        return { params: held.params, url: raw, handle, viaPar: held.viaPar, signed: held.signed, spent }
      }
      const inner = await deps.requestObjects.verify(client, object!)
      const origin = { viaPar: false, signed: true }
      const requestUri = await hold(client, inner, origin)
      return {
        params: inner,
        url: [
          ['client_id', client.clientId],
          ['request_uri', requestUri],
        ],
        handle: requestUriHandle(requestUri),
        ...origin,
        spent: false,
      }
    },

    async peek(raw) {
      const { params } = collect(raw)
      if (params.has('request')) return undefined
      const uri = params.get('request_uri')
      if (uri === undefined) return raw
      const handle = requestUriHandle(uri)
      const held = handle === undefined ? undefined : await deps.pushed.find(handle)
      return held && held.clientId === params.get('client_id') ? held.params : undefined
    },
  }
}
