// The pieces of Client ID Metadata Documents that need no server: which client ids are document
// URLs, which addresses a stranger's URL may make us reach, and how long a document is kept.
import { describe, expect, it } from 'vitest'
import {
  cacheSeconds,
  clientFromDocument,
  createMetadataDocumentClients,
  FAILURE_CACHE_S,
  isMetadataDocumentUrl,
} from '../../src/client-auth/metadata-document.js'
import { isPublicAddress, MetadataFetchError, type MetadataFetcher } from '../../src/client-auth/metadata-fetch.js'
import { createManualClock } from '../../src/domain/clock.js'
import type { ClientStore } from '../../src/stores/clients.js'

describe('isMetadataDocumentUrl', () => {
  it.each([
    'https://agent.example.com/client.json',
    'https://agent.example.com/oauth/client?v=1',
    'http://localhost:8080/client.json',
    'http://app.localhost/client.json',
    'http://127.0.0.1:9/c',
    'http://[::1]:9/c',
  ])('takes %s for a document URL', (id) => expect(isMetadataDocumentUrl(id)?.href).toBe(id))

  it.each([
    ['a plain client id', 'web'],
    ['http for another host', 'http://agent.example.com/client.json'],
    ['no path', 'https://agent.example.com/'],
    ['a fragment', 'https://agent.example.com/client.json#x'],
    ['credentials', 'https://user@agent.example.com/client.json'],
    ['a dot segment', 'https://agent.example.com/a/../client.json'],
    ['a form the URL parser rewrites', 'https://AGENT.example.com/client.json'],
  ])('refuses %s', (_what, id) => expect(isMetadataDocumentUrl(id)).toBeUndefined())
})

describe('isPublicAddress', () => {
  it.each(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c', '::ffff:93.184.215.14'])('allows %s', (a) =>
    expect(isPublicAddress(a)).toBe(true),
  )
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    '::ffff:10.0.0.1',
    'not an address',
  ])('refuses %s', (a) => expect(isPublicAddress(a)).toBe(false))
})

describe('cacheSeconds', () => {
  const now = Date.UTC(2026, 0, 1)
  it.each([
    [{}, 300],
    [{ 'cache-control': 'max-age=60' }, 300],
    [{ 'cache-control': 'public, max-age=3600' }, 3600],
    [{ 'cache-control': 'max-age=999999' }, 86_400],
    [{ 'cache-control': 'no-store, max-age=3600' }, 300],
    [{ expires: new Date(now + 7200_000).toUTCString(), date: new Date(now).toUTCString() }, 7200],
  ])('keeps %j for %i s', (headers, seconds) => expect(cacheSeconds(headers, now)).toBe(seconds))
})

describe('clientFromDocument', () => {
  const id = 'https://agent.example.com/client.json'
  const doc = (extra: Record<string, unknown> = {}) =>
    Buffer.from(JSON.stringify({ client_id: id, client_name: 'Agent', redirect_uris: ['https://agent.example.com/cb'], ...extra }))

  it('makes a public client with PKCE that asks for consent, marked as described by a document', () => {
    expect(clientFromDocument(id, doc(), ['mcp:tools'])).toMatchObject({
      clientId: id,
      clientName: 'Agent',
      requireClientSecret: false,
      requirePkce: true,
      requireConsent: true,
      allowedGrantTypes: ['authorization_code'],
      allowedScopes: ['mcp:tools'],
      redirectUris: ['https://agent.example.com/cb'],
      selfRegistered: 'metadata-document',
    })
  })

  it('accepts private_key_jwt only with a jwks_uri', () => {
    expect(() => clientFromDocument(id, doc({ token_endpoint_auth_method: 'private_key_jwt' }), [])).toThrow(
      'does not describe a public client',
    )
    expect(
      clientFromDocument(id, doc({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://agent.example.com/jwks' }), [])
        .clientId,
    ).toBe(id)
  })

  it.each([
    ['a client_secret', { client_secret: 's' }, 'holds a client_secret'],
    ['a javascript: redirect URI', { redirect_uris: ['javascript:alert(1)'] }, 'holds a redirect URI that is not allowed'],
    ['a scope that is not a string', { scope: ['mcp:tools'] }, 'has a scope that is not a string'],
    // A right-to-left override would show the person "Agent‮moc.elgoog" as another name.
    ['a client_name with a bidi control', { client_name: 'Agent\u202egoogle.com' }, 'has a client_name with control or format characters'],
    ['a client_name with a zero-width space', { client_name: 'Goo\u200bgle' }, 'has a client_name with control or format characters'],
    ['a client_name with a control character', { client_name: 'Agent\u0007' }, 'has a client_name with control or format characters'],
    ['a client_name that is not a string', { client_name: 7 }, 'has a client_name that is not a non-empty string'],
  ])('refuses %s', (_what, extra, reason) => expect(() => clientFromDocument(id, doc(extra), ['mcp:tools'])).toThrow(reason))
})

describe('createMetadataDocumentClients', () => {
  const id = 'https://agent.example.com/client.json'
  const noClients = { findById: async () => undefined } as unknown as ClientStore

  /** A fetcher that answers `answer()` and counts its fetches. */
  function counting(answer: () => Promise<Awaited<ReturnType<MetadataFetcher['get']>>>) {
    const fetcher = { count: 0, get: () => (fetcher.count++, answer()) }
    return fetcher
  }
  const failing = () => Promise.reject(new MetadataFetchError('the client metadata document URL did not answer 200 OK'))
  const good = () =>
    Promise.resolve({ body: Buffer.from(JSON.stringify({ client_id: id, redirect_uris: ['https://agent.example.com/cb'] })), headers: {} })

  it("keeps a failed fetch for a minute, so a stranger's failing URL is not fetched at every request", async () => {
    const clock = createManualClock()
    const fetcher = counting(failing)
    const clients = createMetadataDocumentClients({ inner: noClients, fetcher, clock, allowedScopes: [] })
    await expect(clients.find(id)).rejects.toThrow('client_id: the client metadata document URL did not answer 200 OK')
    clock.advance(FAILURE_CACHE_S - 1)
    await expect(clients.find(id)).rejects.toThrow('did not answer 200 OK')
    expect(await clients.store.findById(id)).toBeUndefined()
    expect(fetcher.count).toBe(1)
    clock.advance(2)
    await expect(clients.find(id)).rejects.toThrow('did not answer 200 OK')
    expect(fetcher.count).toBe(2)
  })

  it('keeps a refused document as briefly, then takes the document as it is now', async () => {
    const clock = createManualClock()
    let body = { client_id: 'https://other.example/client.json', redirect_uris: ['https://agent.example.com/cb'] }
    const fetcher = counting(() => Promise.resolve({ body: Buffer.from(JSON.stringify(body)), headers: {} }))
    const clients = createMetadataDocumentClients({ inner: noClients, fetcher, clock, allowedScopes: [] })
    await expect(clients.find(id)).rejects.toThrow('holds another client_id than its own URL')
    body = { ...body, client_id: id }
    await expect(clients.find(id)).rejects.toThrow('holds another client_id than its own URL')
    expect(fetcher.count).toBe(1)
    clock.advance(FAILURE_CACHE_S + 1)
    expect((await clients.find(id))?.clientId).toBe(id)
    expect(fetcher.count).toBe(2)
  })

  it('does not keep a fetch refused for too many in flight: that is no fault of the URL', async () => {
    const clock = createManualClock()
    let busy = true
    const fetcher = counting(() =>
      busy ? Promise.reject(new MetadataFetchError('too many client metadata documents are being fetched: try again', true)) : good(),
    )
    const clients = createMetadataDocumentClients({ inner: noClients, fetcher, clock, allowedScopes: [] })
    await expect(clients.find(id)).rejects.toThrow('too many client metadata documents are being fetched')
    busy = false
    expect((await clients.find(id))?.clientId).toBe(id)
  })

  it('logs a failure once per fetch, not at every request it is answered from the cache', async () => {
    const clock = createManualClock()
    const refusals: string[] = []
    const clients = createMetadataDocumentClients({
      inner: noClients,
      fetcher: counting(failing),
      clock,
      allowedScopes: [],
      onRefused: (_clientId, reason) => refusals.push(reason),
    })
    for (let i = 0; i < 3; i++) await expect(clients.find(id)).rejects.toThrow('did not answer 200 OK')
    expect(refusals).toEqual(['client_id: the client metadata document URL did not answer 200 OK'])
  })
})
