// A client's public keys (RFC 7591 §2: `jwks` by value or `jwks_uri` by reference), for every JWT
// a client signs: client assertions (RFC 7523 §2.2), CIBA request objects and login_hint_tokens,
// request objects at the authorization and pushed authorization request endpoints (RFC 9101). Only public asymmetric keys are ever
// returned: a symmetric or private member in a client's key set is dropped, so no HMAC can be
// verified with a public key.
//
// A jwks_uri document is fetched with a deadline and a byte cap (src/domain/outbound-fetch.ts),
// kept for KEYS_MAX_AGE, and fetched again before that when a JWS names a kid the copy lacks (the
// client rotated its keys), at most once every REFETCH_INTERVAL per client, so that assertions
// naming made-up kids cannot make this server hammer the client's host.
//
// The jwks_uri of a self-registered client (Dynamic Client Registration, a Client ID Metadata
// Document) is a stranger's URL: it is fetched as a metadata document is (metadata-fetch.ts),
// never reaching a private, loopback or link-local address unless the host is a localhost name.
import { createLocalJWKSet, errors, type CryptoKey, type JSONWebKeySet, type JWK, type JWSHeaderParameters } from 'jose'
import type { Clock } from '../domain/clock.js'
import { fetchBounded, type OutboundFetchOptions } from '../domain/outbound-fetch.js'
import type { Client } from '../domain/types.js'

/** A fetched key set is used this long before it is fetched again (ms). */
export const KEYS_MAX_AGE_MS = 300_000
/** At most one fetch of a client's jwks_uri in this time (ms), however many unknown kids arrive. */
export const REFETCH_INTERVAL_MS = 10_000
/** Bounds of one fetch. */
export const JWKS_FETCH_TIMEOUT_MS = 5_000
export const JWKS_MAX_BYTES = 64 * 1024
/** Clients whose fetched keys are kept; a larger set forgets the oldest. */
const MAX_CACHED_CLIENTS = 1_000
const MAX_KEYS = 100

export type ClientKeySource = Pick<Client, 'clientId' | 'jwks' | 'jwksUri'> & Partial<Pick<Client, 'selfRegistered'>>

export interface ClientKeyResolver {
  /** Whether the client has registered keys at all (jwks or jwks_uri). */
  hasKeys(client: ClientKeySource): boolean
  /**
   * The verification key for a JWS with this protected header. Throws jose's JWKSNoMatchingKey
   * (or JWKSMultipleMatchingKeys) when none (or no single one) fits, ClientKeysUnavailable when
   * the client's jwks_uri could not be read and no copy is at hand.
   */
  resolve(client: ClientKeySource, header: JWSHeaderParameters): Promise<CryptoKey>
}

export class ClientKeysUnavailable extends Error {
  override readonly name = 'ClientKeysUnavailable'
}

export interface ClientKeyResolverDeps {
  clock: Clock
  /** Logs a failed fetch by client and reason, never the document. */
  onFetchFailed?: (clientId: string, err: unknown) => void
  fetchOptions?: Partial<OutboundFetchOptions>
  /** Fetches a self-registered client's jwks_uri (a stranger's URL); without it, as any other. */
  strangerFetch?: (uri: string) => Promise<string>
}

interface Fetched {
  uri: string
  keys: JWK[] | undefined
  /** When the last fetch was attempted, successful or not (ms). */
  attemptedAt: number
  /** When `keys` were fetched (ms). */
  fetchedAt: number
}

/** The public asymmetric keys of a set; symmetric or private members are never used. */
export function publicKeys(set: unknown): JWK[] {
  const keys = typeof set === 'object' && set !== null && Array.isArray((set as JSONWebKeySet).keys) ? (set as JSONWebKeySet).keys : []
  return keys
    .filter((k): k is JWK => typeof k === 'object' && k !== null && ['RSA', 'EC', 'OKP'].includes(k.kty as string) && !('d' in k))
    .slice(0, MAX_KEYS)
}

export function createClientKeyResolver(deps: ClientKeyResolverDeps): ClientKeyResolver {
  const fetched = new Map<string, Fetched>()
  const inFlight = new Map<string, Promise<Fetched>>()
  const options: OutboundFetchOptions = {
    timeoutMs: JWKS_FETCH_TIMEOUT_MS,
    maxBytes: JWKS_MAX_BYTES,
    accept: 'application/jwk-set+json, application/json',
    ...deps.fetchOptions,
  }

  async function load(clientId: string, uri: string, previous: Fetched | undefined, stranger: boolean): Promise<Fetched> {
    const now = deps.clock.now()
    let next: Fetched
    try {
      const body = stranger && deps.strangerFetch ? await deps.strangerFetch(uri) : await fetchBounded(uri, options)
      const keys = publicKeys(JSON.parse(body))
      next = { uri, keys, attemptedAt: now, fetchedAt: now }
    } catch (err) {
      deps.onFetchFailed?.(clientId, err)
      // A copy fetched before stays in use; the next attempt waits out REFETCH_INTERVAL.
      next = { uri, keys: previous?.keys, attemptedAt: now, fetchedAt: previous?.fetchedAt ?? 0 }
    }
    if (fetched.size >= MAX_CACHED_CLIENTS && !fetched.has(clientId)) fetched.delete(fetched.keys().next().value!)
    fetched.set(clientId, next)
    return next
  }

  /** One fetch per client at a time; callers arriving meanwhile share it. */
  function refetch(clientId: string, uri: string, previous: Fetched | undefined, stranger: boolean): Promise<Fetched> {
    let p = inFlight.get(clientId)
    if (!p) {
      p = load(clientId, uri, previous, stranger).finally(() => inFlight.delete(clientId))
      inFlight.set(clientId, p)
    }
    return p
  }

  async function remoteKeys(client: ClientKeySource & { jwksUri: string }, header: JWSHeaderParameters): Promise<JWK[]> {
    const now = deps.clock.now()
    let entry = fetched.get(client.clientId)
    if (entry && entry.uri !== client.jwksUri) entry = undefined // the registration changed
    const mayFetch = !entry || now - entry.attemptedAt >= REFETCH_INTERVAL_MS
    const stale = !entry?.keys || now - entry.fetchedAt >= KEYS_MAX_AGE_MS
    const unknownKid = header.kid !== undefined && !entry?.keys?.some((k) => k.kid === header.kid)
    if (mayFetch && (stale || unknownKid))
      entry = await refetch(client.clientId, client.jwksUri, entry, client.selfRegistered !== undefined)
    if (!entry?.keys) throw new ClientKeysUnavailable('the client keys could not be fetched')
    return entry.keys
  }

  return {
    hasKeys: (client) => client.jwksUri !== undefined || (client.jwks?.keys.length ?? 0) > 0,
    async resolve(client, header) {
      const keys = client.jwksUri !== undefined ? await remoteKeys({ ...client, jwksUri: client.jwksUri }, header) : publicKeys(client.jwks)
      if (keys.length === 0) throw new errors.JWKSNoMatchingKey()
      return createLocalJWKSet({ keys })(header, { payload: '', signature: '' })
    },
  }
}
