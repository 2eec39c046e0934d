// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, as the MCP
// authorization specification 2025-11-25 uses it): a client id that is an https URL names the
// JSON document at that URL, which describes the client (RFC 7591 §2 metadata). Nobody vouches
// for such a client, so it gets only what a public client may have: PKCE required, no secret,
// redirect URIs as listed (compared as every client's: a loopback IP one on any port, RFC 8252
// §7.3), scopes within REGISTRATION_ALLOWED_SCOPES, consent every time.
// A document is kept as its HTTP cache headers say, within CACHE_MIN_S and CACHE_MAX_S (§4.3),
// by the injected clock; concurrent lookups of one URL share one fetch.
import type { Clock } from '../domain/clock.js'
import { isLocalHost, redirectUriProblem } from '../domain/redirect-uri.js'
import { hasControlOrFormatCharacters } from '../grants/acr-values.js'
import type { Client } from '../domain/types.js'
import { OAuthError } from '../errors.js'
import type { ClientStore } from '../stores/clients.js'
import { defaultScopes, selfRegisteredClient } from './self-registered.js'
import { MetadataFetchError, type FetchedDocument, type MetadataFetcher } from './metadata-fetch.js'

/** §4.3: at least 5 minutes (a stranger's URL is not fetched at every request), at most a day. */
export const CACHE_MIN_S = 300
export const CACHE_MAX_S = 86_400
/**
 * A document that failed (unreachable, refused) is answered from the cache this long: a stranger
 * naming a failing URL at every request must not make the server fetch it at every request (§6).
 */
export const FAILURE_CACHE_S = 60
/** Documents kept at once; the oldest goes first. */
const CACHE_MAX_ENTRIES = 1000

export interface MetadataDocumentClients {
  /**
   * The client a client id names: the operator's own first, else, for an https URL, the one its
   * document describes. Throws OAuthError invalid_request with the reason when the document fails.
   */
  find(clientId: string): Promise<Client | undefined>
  /** The store every other lookup uses: a document that fails is an unknown client. */
  store: ClientStore
}

/** §3: https (http only for a localhost name), a path, no fragment, no credentials, no dot segments. */
export function isMetadataDocumentUrl(clientId: string): URL | undefined {
  if (!clientId.startsWith('https://') && !clientId.startsWith('http://')) return undefined
  let url: URL
  try {
    url = new URL(clientId)
  } catch {
    return undefined
  }
  if (url.protocol === 'http:' && !isLocalHost(url.hostname)) return undefined
  if (url.href !== clientId || url.hash !== '' || url.username !== '' || url.password !== '') return undefined
  if (url.pathname === '/' || /\/\.\.?(\/|$)/.test(clientId.slice(url.origin.length))) return undefined
  return url
}

const refused = (reason: string) => new OAuthError('invalid_request', `client_id names a client metadata document that ${reason}`)

/** Seconds the document may be kept: Cache-Control max-age, else Expires, within the bounds. */
export function cacheSeconds(headers: FetchedDocument['headers'], now: number): number {
  const cc = String(headers['cache-control'] ?? '').toLowerCase()
  let seconds = 0
  const maxAge = /(?:^|,)\s*max-age\s*=\s*"?(\d{1,10})"?/.exec(cc)
  if (/(?:^|,)\s*(no-store|no-cache)\b/.test(cc)) seconds = 0
  else if (maxAge) seconds = Number(maxAge[1])
  else if (typeof headers.expires === 'string') {
    const expires = Date.parse(headers.expires)
    const date = typeof headers.date === 'string' ? Date.parse(headers.date) : now
    if (Number.isFinite(expires)) seconds = Math.floor((expires - (Number.isFinite(date) ? date : now)) / 1000)
  }
  return Math.min(CACHE_MAX_S, Math.max(CACHE_MIN_S, seconds))
}

const PUBLIC_GRANTS = new Set(['authorization_code', 'refresh_token'])
const NAME_MAX = 100

/**
 * The name the consent page shows, refused as registration refuses it: a control or format
 * character (a bidi override, a zero-width space) would let the name show the person something
 * other than what it says (Unicode TR 36 §2). Kept to NAME_MAX characters.
 */
function clientName(value: unknown): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string' || value === '') throw refused('has a client_name that is not a non-empty string')
  if (hasControlOrFormatCharacters(value)) throw refused('has a client_name with control or format characters')
  return value.slice(0, NAME_MAX)
}

/** The document as a client, or why it cannot be one (§4.1, RFC 7591 §2). */
export function clientFromDocument(clientId: string, body: Buffer, allowedScopes: readonly string[]): Client {
  let doc: unknown
  try {
    doc = JSON.parse(body.toString('utf8'))
  } catch {
    throw refused('is not JSON')
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw refused('is not a JSON object')
  const d = doc as Record<string, unknown>
  if (d.client_id !== clientId) throw refused('holds another client_id than its own URL')
  if ('client_secret' in d || 'client_secret_expires_at' in d)
    throw refused('holds a client_secret: only public clients describe themselves')
  const method = d.token_endpoint_auth_method ?? 'none'
  if (method !== 'none' && !(method === 'private_key_jwt' && typeof d.jwks_uri === 'string')) {
    throw refused('does not describe a public client (token_endpoint_auth_method none, or private_key_jwt with jwks_uri)')
  }
  const uris = d.redirect_uris
  if (!Array.isArray(uris) || uris.length === 0 || !uris.every((u) => typeof u === 'string' && u.length <= 400))
    throw refused('has no redirect_uris')
  if (uris.some((u: string) => redirectUriProblem(u) !== undefined)) throw refused('holds a redirect URI that is not allowed')
  const grants = d.grant_types ?? ['authorization_code']
  if (!Array.isArray(grants) || !grants.every((g) => typeof g === 'string' && PUBLIC_GRANTS.has(g)))
    throw refused('asks for grant types other than authorization_code and refresh_token')
  const scope = d.scope
  if (scope !== undefined && typeof scope !== 'string') throw refused('has a scope that is not a string')
  const scopes = scope === undefined ? defaultScopes(allowedScopes, grants as string[]) : scope.split(' ').filter((s) => s !== '')
  if (!scopes.every((s) => allowedScopes.includes(s))) throw refused('asks for scopes this server does not allow such clients')
  const name = clientName(d.client_name)
  const keyed = method === 'private_key_jwt'
  return selfRegisteredClient(
    clientId,
    'metadata-document',
    {
      clientName: name,
      authMethod: keyed ? 'private_key_jwt' : 'none',
      grantTypes: ['authorization_code', ...(grants.includes('refresh_token') ? ['refresh_token'] : [])],
      scopes,
      redirectUris: uris as string[],
      postLogoutRedirectUris: [],
      // A private_key_jwt client proves itself with the keys its document points at (RFC 7523 §2.2).
      jwksUri: keyed ? (d.jwks_uri as string) : undefined,
    },
    // Even one that proves itself with keys: nobody vouches for whom its document describes.
    { confidential: false },
  )
}

export function createMetadataDocumentClients(deps: {
  inner: ClientStore
  fetcher: MetadataFetcher
  clock: Clock
  allowedScopes: readonly string[]
  /** Told why a document failed (the log); never the document's content. */
  onRefused?: (clientId: string, reason: string) => void
}): MetadataDocumentClients {
  const cache = new Map<string, { found: Client | OAuthError; until: number }>()
  const pending = new Map<string, Promise<Client>>()

  function keep(clientId: string, found: Client | OAuthError, seconds: number): void {
    if (cache.size >= CACHE_MAX_ENTRIES) cache.delete(cache.keys().next().value!)
    cache.set(clientId, { found, until: deps.clock.now() + seconds * 1000 })
  }

  /** Tells why the document failed, remembers it unless `retry` (then the next request fetches again), and throws it. */
  function refuse(clientId: string, err: OAuthError, retry = false): never {
    if (!retry) keep(clientId, err, FAILURE_CACHE_S)
    deps.onRefused?.(clientId, err.description ?? err.code)
    throw err
  }

  async function load(url: URL): Promise<Client> {
    const clientId = url.href
    let fetched: FetchedDocument
    try {
      fetched = await deps.fetcher.get(url)
    } catch (err) {
      if (!(err instanceof MetadataFetchError)) throw err
      // Too many fetches in flight is this server's state, not the URL's: the next request tries.
      refuse(clientId, new OAuthError('invalid_request', `client_id: ${err.reason}`), err.busy)
    }
    let client: Client
    try {
      client = clientFromDocument(clientId, fetched.body, deps.allowedScopes)
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err
      refuse(clientId, err)
    }
    keep(clientId, client, cacheSeconds(fetched.headers, deps.clock.now()))
    return client
  }

  async function find(clientId: string): Promise<Client | undefined> {
    const own = await deps.inner.findById(clientId)
    if (own) return own
    const url = isMetadataDocumentUrl(clientId)
    if (!url) return undefined
    const kept = cache.get(clientId)
    if (kept && kept.until > deps.clock.now()) {
      if (kept.found instanceof OAuthError) throw kept.found
      return kept.found
    }
    cache.delete(clientId)
    let loading = pending.get(clientId)
    if (!loading) {
      loading = load(url).finally(() => pending.delete(clientId))
      pending.set(clientId, loading)
    }
    return loading
  }

  return {
    find,
    store: {
      ...deps.inner,
      async findById(clientId) {
        try {
          return await find(clientId)
        } catch (err) {
          if (err instanceof OAuthError) return undefined
          throw err
        }
      },
    },
  }
}
