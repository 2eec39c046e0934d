// Client ID Metadata Documents at the authorization and token endpoints: a URL client id is
// fetched only with CLIENT_ID_METADATA_DOCUMENTS on; a good document makes a public client with
// PKCE whose person is asked every time, named as not verified; a document that is too large,
// slow, redirecting, mismatched, confidential, or at a private address is a 400 page that
// redirects nowhere; a document is kept as its cache headers say, within 5 minutes and a day.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../src/seed/apply.js'
import { createTestApp, FORM, form, type TestApp } from '../helpers/app.js'
import { authorizeUrl, consent, located, pkcePair, session } from '../flows/authorization-code/harness.js'

type Handler = (req: IncomingMessage, res: ServerResponse) => void

let server: Server
let origin: string
let handler: Handler
const seen: string[] = []

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.url ?? '')
    handler(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})
afterEach(() => {
  seen.length = 0
})

const CB = 'http://127.0.0.1:9/callback'

function documentFor(clientId: string, extra: Record<string, unknown> = {}) {
  return {
    client_id: clientId,
    client_name: 'Example Agent',
    redirect_uris: [CB],
    grant_types: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_method: 'none',
    ...extra,
  }
}

/** Serves `doc` (a function of the client id) as JSON with `headers`. */
function serve(doc: (clientId: string) => unknown, headers: Record<string, string> = {}): Handler {
  return (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', ...headers })
    res.end(JSON.stringify(doc(`${origin}${req.url}`)))
  }
}

const SEED = {
  apiScopes: [{ name: 'tools.read', displayName: 'Use the tools' }, { name: 'admin.all' }],
  apiResources: [{ name: 'https://mcp.example.com/mcp', scopes: ['tools.read'] }],
  identityResources: ['openid', 'profile', 'offline_access'],
  users: [{ subjectId: 'u-alice', username: 'alice', password: 'alice-pw', claims: { name: 'Alice' } }],
}

async function app(env: Record<string, string> = {}, timeoutMs?: number): Promise<TestApp> {
  const authz = await createTestApp({
    env: { CLIENT_ID_METADATA_DOCUMENTS: 'true', REGISTRATION_ALLOWED_SCOPES: 'openid profile offline_access tools.read', ...env },
    ...(timeoutMs ? { metadataFetch: { timeoutMs } } : {}),
  })
  await applySeed(authz.db, SEED)
  return authz
}

function urlFor(clientId: string, params: Record<string, string> = {}, challenge?: string) {
  return authorizeUrl({ client_id: clientId, redirect_uri: CB, scope: 'openid tools.read', ...params }, challenge)
}

describe('with CLIENT_ID_METADATA_DOCUMENTS off (the default)', () => {
  it('takes a URL client id for an unknown client and fetches nothing', async () => {
    const authz = await createTestApp()
    try {
      handler = serve((id) => documentFor(id))
      const res = await authz.app.inject({ method: 'GET', url: urlFor(`${origin}/client.json`) })
      expect(res.statusCode).toBe(400)
      expect(res.headers.location).toBeUndefined()
      expect(res.body).toContain('client_id is unknown or the client is disabled')
      expect(seen).toEqual([])
      const meta = (await authz.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json()
      expect(meta.client_id_metadata_document_supported).toBeUndefined()
    } finally {
      await authz.close()
    }
  })
})

describe('with CLIENT_ID_METADATA_DOCUMENTS on', () => {
  let authz: TestApp
  beforeAll(async () => {
    authz = await app({}, 300)
  })
  afterAll(async () => authz.close())

  it('says so in both discovery documents, with S256 and the scopes', async () => {
    for (const url of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const meta = (await authz.app.inject({ method: 'GET', url })).json()
      expect(meta.client_id_metadata_document_supported).toBe(true)
      expect(meta.code_challenge_methods_supported).toEqual(['S256'])
      expect(meta.scopes_supported).toEqual(expect.arrayContaining(['openid', 'tools.read']))
    }
  })

  it('signs a person in for the client the document describes, names its host and asks every time', async () => {
    handler = serve((id) => documentFor(id))
    const clientId = `${origin}/agent.json`
    const cookie = await session(authz)
    const { verifier, challenge } = pkcePair()
    const url = urlFor(clientId, { resource: 'https://mcp.example.com/mcp' }, challenge)
    const page = await authz.app.inject({ method: 'GET', url, headers: { cookie } })
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('Example Agent wants to access your account')
    expect(page.body).toContain('Not verified by the operator of this server')
    expect(page.body).toMatch(/<p class="host" id="client-host">127\.0\.0\.1:\d+<\/p>/)
    expect(page.body).not.toContain('name="remember"')
    const res = await consent(authz, url, cookie, 'approve', true)
    expect(res.statusCode).toBe(303)
    const back = located(res)
    expect(back.origin + back.pathname).toBe(CB)
    const token = await authz.app.inject({
      method: 'POST',
      url: '/connect/token',
      headers: FORM,
      payload: form({
        grant_type: 'authorization_code',
        client_id: clientId,
        code: back.searchParams.get('code')!,
        redirect_uri: CB,
        code_verifier: verifier,
      }),
    })
    expect(token.statusCode).toBe(200)
    const claims = JSON.parse(Buffer.from(token.json().access_token.split('.')[1], 'base64url').toString())
    expect(claims.aud).toBe('https://mcp.example.com/mcp')
    expect(claims.client_id).toBe(clientId)
    expect(claims.scope).toBe('openid tools.read')
    // Asked again, although "remember" was posted: consent is never remembered for such a client.
    const again = await authz.app.inject({ method: 'GET', url: urlFor(clientId), headers: { cookie } })
    expect(again.statusCode).toBe(200)
    expect(again.body).toContain('Not verified by the operator of this server')
    const none = await authz.app.inject({ method: 'GET', url: urlFor(clientId, { prompt: 'none' }), headers: { cookie } })
    expect(located(none).searchParams.get('error')).toBe('consent_required')
  })

  it('requires PKCE of it', async () => {
    handler = serve((id) => documentFor(id))
    const res = await authz.app.inject({
      method: 'GET',
      url: urlFor(`${origin}/pkce.json`, {}, '').replace('&code_challenge=&code_challenge_method=S256', ''),
    })
    expect(located(res).searchParams.get('error_description')).toBe('code_challenge is required: public clients must use PKCE with S256')
  })

  const refusals: Array<[string, Handler | string, string]> = [
    [
      'too large',
      serve((id) => ({ ...documentFor(id), padding: 'x'.repeat(70 * 1024) })),
      'the client metadata document is larger than 64 KiB',
    ],
    ['slow', () => undefined, 'the client metadata document did not arrive in time'],
    ['redirecting', (_req, res) => res.writeHead(302, { location: `${origin}/elsewhere.json` }).end(), 'redirects are not followed'],
    ['mismatched', serve(() => documentFor('https://other.example/agent.json')), 'holds another client_id than its own URL'],
    ['not JSON', (_req, res) => res.end('<html>'), 'client metadata document that is not JSON'],
    [
      'confidential',
      serve((id) => documentFor(id, { token_endpoint_auth_method: 'client_secret_basic' })),
      'does not describe a public client',
    ],
    ['without redirect URIs', serve((id) => documentFor(id, { redirect_uris: [] })), 'has no redirect_uris'],
    [
      'beyond the allowed scopes',
      serve((id) => documentFor(id, { scope: 'openid admin.all' })),
      'asks for scopes this server does not allow',
    ],
    [
      'asking for client_credentials',
      serve((id) => documentFor(id, { grant_types: ['client_credentials'] })),
      'asks for grant types other than',
    ],
    ['not found', (_req, res) => res.writeHead(404).end(), 'did not answer 200 OK'],
    ['at a private address', 'https://10.0.0.1/agent.json', 'at an address that may not be reached'],
    ['at a link-local address', 'https://[fe80::1]/agent.json', 'at an address that may not be reached'],
  ]
  for (const [what, h, reason] of refusals) {
    it(`refuses a document ${what} with a page that redirects nowhere`, async () => {
      const clientId = typeof h === 'string' ? h : `${origin}/${what.replace(/ /g, '-')}.json`
      if (typeof h !== 'string') handler = h
      const res = await authz.app.inject({ method: 'GET', url: urlFor(clientId) })
      expect(res.statusCode).toBe(400)
      expect(res.headers.location).toBeUndefined()
      expect(res.headers['content-type']).toContain('text/html')
      expect(res.body).toContain(reason)
    })
  }

  it('refuses a redirect URI the document does not list, as a page', async () => {
    handler = serve((id) => documentFor(id))
    const res = await authz.app.inject({
      method: 'GET',
      url: urlFor(`${origin}/other-cb.json`, { redirect_uri: 'http://127.0.0.1:9/evil' }),
    })
    expect(res.statusCode).toBe(400)
    expect(res.headers.location).toBeUndefined()
    expect(res.body).toContain('redirect_uri is not registered for this client')
  })

  it('takes a listed loopback IP redirect URI on any port, as a native client needs (RFC 8252 §7.3)', async () => {
    handler = serve((id) => documentFor(id))
    const res = await authz.app.inject({
      method: 'GET',
      url: urlFor(`${origin}/native.json`, { redirect_uri: 'http://127.0.0.1:51000/callback' }),
    })
    expect(res.statusCode).toBe(303)
    expect(located(res).pathname).toBe('/account/sign-in')
  })

  it('lets its redirect URI origin read token answers, but refuses that origin a preflight (it names no client)', async () => {
    handler = serve((id) => documentFor(id))
    const page = 'http://127.0.0.1:9'
    const res = await authz.app.inject({
      method: 'POST',
      url: '/connect/token',
      headers: { ...FORM, origin: page },
      payload: form({
        grant_type: 'authorization_code',
        client_id: `${origin}/browser.json`,
        code: 'x',
        redirect_uri: CB,
        code_verifier: 'v'.repeat(43),
      }),
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('invalid_grant')
    expect(res.headers['access-control-allow-origin']).toBe(page)
    const preflight = await authz.app.inject({
      method: 'OPTIONS',
      url: '/connect/token',
      headers: { origin: page, 'access-control-request-method': 'POST', 'access-control-request-headers': 'dpop' },
    })
    expect(preflight.statusCode).toBe(404)
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('answers the token endpoint invalid_client for a document that fails', async () => {
    handler = (_req, res) => res.writeHead(500).end()
    const res = await authz.app.inject({
      method: 'POST',
      url: '/connect/token',
      headers: FORM,
      payload: form({
        grant_type: 'authorization_code',
        client_id: `${origin}/broken.json`,
        code: 'x',
        redirect_uri: CB,
        code_verifier: 'v'.repeat(43),
      }),
    })
    expect(res.statusCode).toBe(401)
    expect(res.json().error).toBe('invalid_client')
  })

  it('keeps a document as its Cache-Control says, but at least 5 minutes', async () => {
    const page = (id: string) => authz.app.inject({ method: 'GET', url: urlFor(id) })
    handler = serve((id) => documentFor(id), { 'cache-control': 'max-age=1' })
    const short = `${origin}/short.json`
    expect((await page(short)).statusCode).toBe(303)
    authz.clock.advance(299)
    await page(short)
    expect(seen.filter((u) => u === '/short.json')).toHaveLength(1)
    authz.clock.advance(2)
    await page(short)
    expect(seen.filter((u) => u === '/short.json')).toHaveLength(2)

    handler = serve((id) => documentFor(id), { 'cache-control': 'public, max-age=600' })
    const long = `${origin}/long.json`
    await page(long)
    authz.clock.advance(599)
    await page(long)
    expect(seen.filter((u) => u === '/long.json')).toHaveLength(1)
    authz.clock.advance(2)
    await page(long)
    expect(seen.filter((u) => u === '/long.json')).toHaveLength(2)
  })
})
