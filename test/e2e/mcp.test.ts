// An MCP server protected by this server, end to end, with the MCP SDK on both sides: the server
// (Streamable HTTP transport, the SDK's bearer-auth middleware, its RFC 9728 protected-resource
// metadata naming us) verifies our JWTs with our JWKS and the `aud` check; the SDK's client, with
// its OAuth support, finds us from the server's 401, names itself by a Client ID Metadata Document
// the test serves over https, or registers itself (RFC 7591, REGISTRATION=open), and a person signs
// in and consents in headless Chromium. Then the client lists and calls the tools. A token for another resource is refused by the MCP server;
// documents that are too large, slow, redirecting or mismatched are refused with a clear page.
//
// connectThroughBrowser(provider) is the whole person-and-client dance: a client that registers
// itself (Dynamic Client Registration) is one more provider, without clientMetadataUrl.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js'
import { getOAuthProtectedResourceMetadataUrl, mcpAuthMetadataRouter } from '@modelcontextprotocol/sdk/server/auth/router.js'
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js'
import type { OAuthClientInformationMixed, OAuthMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import express from 'express'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import type { Browser, BrowserContext } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { ALICE, approveConsent, signInAs, startAuthz, type Authz } from './authz-server.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'
import { startSite, type Site } from './site.js'

warnIfNoChromium('the MCP end-to-end tests')

const SHOTS = process.env.SCREENSHOT_DIR
const OTHER_API = 'https://other.example.com/api'

let authz: Authz
let browser: Browser
let context: BrowserContext
let callback: Site
let mcp: Site
let mcpUrl: string
let documents: HttpsServer
let documentOrigin: string
let certDir: string

/** What the document server answers, by path (the client id is its URL). */
const documentHandlers: Record<string, (clientId: string, req: IncomingMessage, res: ServerResponse) => void> = {
  '/client.json': (clientId, _req, res) => json(res, clientDocument(clientId)),
  '/too-large.json': (clientId, _req, res) => json(res, { ...clientDocument(clientId), padding: 'x'.repeat(70 * 1024) }),
  '/slow.json': () => undefined, // never answers
  '/redirecting.json': (_id, _req, res) => res.writeHead(302, { location: `${documentOrigin}/client.json` }).end(),
  '/mismatched.json': (_id, _req, res) => json(res, clientDocument(`${documentOrigin}/client.json`)),
}

function json(res: ServerResponse, body: unknown) {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' })
  res.end(JSON.stringify(body))
}

/** The client's metadata, as the SDK's client sends it when it registers, plus its URL as client_id. */
function clientDocument(clientId: string) {
  return { client_id: clientId, ...clientMetadata() }
}

const clientMetadata = () => ({
  client_name: 'Example MCP Agent',
  redirect_uris: [`${callback.origin}/callback`],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
})

/** A self-signed certificate for localhost, made for this run. */
function makeCertificate(): { key: string; cert: string } {
  certDir = mkdtempSync(join(tmpdir(), 'authz-mcp-'))
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost', '-keyout', join(certDir, 'key.pem'), '-out', join(certDir, 'cert.pem'),
  ], { stdio: 'ignore' }) // prettier-ignore
  return { key: readFileSync(join(certDir, 'key.pem'), 'utf8'), cert: readFileSync(join(certDir, 'cert.pem'), 'utf8') }
}

/** The MCP server: its tools behind the SDK's bearer middleware, our JWTs checked with our JWKS and the aud check. */
async function startMcpServer(site: Site, url: string, issuer: string): Promise<void> {
  const oauthMetadata = (await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json()) as OAuthMetadata
  const jwks = createRemoteJWKSet(new URL(String(oauthMetadata.jwks_uri)))
  const verifier = {
    async verifyAccessToken(token: string) {
      try {
        const { payload } = await jwtVerify(token, jwks, { issuer, audience: url })
        return {
          token,
          clientId: String(payload.client_id),
          scopes: typeof payload.scope === 'string' ? payload.scope.split(' ') : [],
          expiresAt: payload.exp,
          resource: new URL(url),
        }
      } catch {
        throw new InvalidTokenError('the token is not valid for this server')
      }
    },
  }
  const app = express()
  app.use(express.json())
  app.use(
    mcpAuthMetadataRouter({ oauthMetadata, resourceServerUrl: new URL(url), scopesSupported: ['mcp:tools'], resourceName: 'Test tools' }),
  )
  const bearer = requireBearerAuth({
    verifier,
    requiredScopes: ['mcp:tools'],
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(new URL(url)),
  })
  app.post('/mcp', bearer, async (req, res) => {
    const server = new McpServer({ name: 'test-tools', version: '1.0.0' })
    server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
    }))
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
    res.on('close', () => void Promise.all([transport.close(), server.close()]))
    await server.connect(transport)
    await transport.handleRequest(req, res, req.body)
  })
  site.server.on('request', app)
}

/** The SDK client's OAuth side, in memory, as a desktop agent keeps it. */
class TestProvider implements OAuthClientProvider {
  authorizationUrl: URL | undefined
  private info: OAuthClientInformationMixed | undefined
  private saved: OAuthTokens | undefined
  private verifier = ''
  constructor(readonly clientMetadataUrl: string | undefined) {}
  get redirectUrl() {
    return `${callback.origin}/callback`
  }
  get clientMetadata() {
    return clientMetadata()
  }
  clientInformation() {
    return this.info
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
}

/** A client that registers itself: RFC 8252 §7.3 loopback redirects are by IP address, never "localhost". */
class RegisteringProvider extends TestProvider {
  constructor() {
    super(undefined)
  }
  override get redirectUrl() {
    return `http://127.0.0.1:${new URL(callback.origin).port}/callback`
  }
  override get clientMetadata() {
    return { ...clientMetadata(), redirect_uris: [this.redirectUrl] }
  }
}

/**
 * The SDK client meets the MCP server's 401, finds us through its protected-resource metadata and
 * sends the person to our authorization endpoint; the person signs in and consents in the
 * browser; the client finishes with the code and connects. Returns the connected client.
 */
async function connectThroughBrowser(provider: TestProvider, shot: string): Promise<Client> {
  const first = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider })
  await expect(new Client({ name: 'test-agent', version: '1.0.0' }).connect(first)).rejects.toThrow(UnauthorizedError)
  expect(provider.authorizationUrl?.searchParams.get('resource')).toBe(mcpUrl)
  // A browser of its own: each client meets a person who has not signed in yet.
  const own = await browser.newContext()
  const page = await own.newPage()
  await page.goto(provider.authorizationUrl!.href)
  await signInAs(page, ALICE, (u) => u.pathname === '/connect/authorize')
  await expect(page.locator('#client-host').textContent()).resolves.toBe(new URL(provider.clientMetadataUrl ?? provider.redirectUrl).host)
  if (SHOTS) {
    await page.screenshot({ path: `${SHOTS}/${shot}-consent-desktop.png`, fullPage: true })
    await page.setViewportSize({ width: 390, height: 844 })
    await page.screenshot({ path: `${SHOTS}/${shot}-consent-phone.png`, fullPage: true })
  }
  await approveConsent(page, (u) => u.href.startsWith(provider.redirectUrl))
  const code = new URL(page.url()).searchParams.get('code')
  await own.close()
  await first.finishAuth(code!)
  const client = new Client({ name: 'test-agent', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }))
  return client
}

beforeAll(async () => {
  if (!haveChromium) return
  const { key, cert } = makeCertificate()
  documents = createHttpsServer({ key, cert }, (req, res) => {
    const path = new URL(req.url ?? '/', documentOrigin).pathname
    const handler = documentHandlers[path]
    if (!handler) return void res.writeHead(404).end()
    handler(`${documentOrigin}${path}`, req, res)
  })
  await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve))
  documentOrigin = `https://localhost:${(documents.address() as AddressInfo).port}`
  callback = await startSite((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Agent</title>'))
  mcp = await startSite()
  mcpUrl = `http://127.0.0.1:${(mcp.server.address() as AddressInfo).port}/mcp`
  authz = await startAuthz(
    {
      apiScopes: [{ name: 'mcp:tools', displayName: 'Use the test tools' }, { name: 'other:read' }],
      // The MCP server's API resource is named by its URL: the token's aud is exactly that string.
      apiResources: [
        { name: mcpUrl, scopes: ['mcp:tools'] },
        { name: OTHER_API, scopes: ['other:read', 'mcp:tools'] },
      ],
      identityResources: ['openid', 'profile'],
      clients: [
        { clientId: 'svc', secrets: [{ value: 'svc-secret' }], allowedGrantTypes: ['client_credentials'], allowedScopes: ['mcp:tools'] },
      ],
      users: [ALICE],
    },
    {
      env: { CLIENT_ID_METADATA_DOCUMENTS: 'true', REGISTRATION: 'open', REGISTRATION_ALLOWED_SCOPES: 'mcp:tools' },
      metadataFetch: { extraCa: cert, timeoutMs: 1000 },
    },
  )
  await startMcpServer(mcp, mcpUrl, authz.issuer)
  browser = await launchChromium()
  context = await browser.newContext()
})
afterAll(async () => {
  await browser?.close()
  await authz?.close()
  mcp?.server.closeAllConnections()
  await mcp?.close()
  await callback?.close()
  documents?.closeAllConnections()
  await new Promise((resolve) => (documents ? documents.close(resolve) : resolve(undefined)))
  if (certDir) rmSync(certDir, { recursive: true, force: true })
})

describe.skipIf(!haveChromium)('an MCP client and server with the MCP SDK', () => {
  it('signs in through a Client ID Metadata Document, then lists and calls the tools', async () => {
    const provider = new TestProvider(`${documentOrigin}/client.json`)
    const client = await connectThroughBrowser(provider, 'mcp-metadata-document')
    try {
      expect(provider.clientInformation()?.client_id).toBe(`${documentOrigin}/client.json`)
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name)).toEqual(['add'])
      const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } })
      expect(result.content).toEqual([{ type: 'text', text: '42' }])
      const claims = JSON.parse(Buffer.from(provider.tokens()!.access_token.split('.')[1]!, 'base64url').toString())
      expect(claims).toMatchObject({ aud: mcpUrl, scope: 'mcp:tools', client_id: `${documentOrigin}/client.json` })
    } finally {
      await client.close()
    }
  })

  it('registers itself (Dynamic Client Registration), signs in, then lists and calls the tools', async () => {
    const provider = new RegisteringProvider()
    const client = await connectThroughBrowser(provider, 'mcp-registration')
    try {
      const clientId = provider.clientInformation()?.client_id
      expect(clientId).toEqual(expect.any(String))
      expect(clientId).not.toContain(documentOrigin)
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name)).toEqual(['add'])
      const result = await client.callTool({ name: 'add', arguments: { a: 20, b: 22 } })
      expect(result.content).toEqual([{ type: 'text', text: '42' }])
      const claims = JSON.parse(Buffer.from(provider.tokens()!.access_token.split('.')[1]!, 'base64url').toString())
      expect(claims).toMatchObject({ aud: mcpUrl, scope: 'mcp:tools', client_id: clientId })
    } finally {
      await client.close()
    }
  })

  it('refuses, at the MCP server, a token of ours for another resource', async () => {
    const token = await fetch(`${authz.issuer}/connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'svc', client_secret: 'svc-secret', resource: OTHER_API }),
    })
    expect(token.status).toBe(200)
    const res = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${((await token.json()) as { access_token: string }).access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"')
  })

  for (const [path, reason] of [
    ['/too-large.json', 'the client metadata document is larger than 64 KiB'],
    ['/slow.json', 'the client metadata document did not arrive in time'],
    ['/redirecting.json', 'the client metadata document URL redirects: redirects are not followed'],
    ['/mismatched.json', 'client_id names a client metadata document that holds another client_id than its own URL'],
  ] as const) {
    it(`refuses a client whose document at ${path} fails, with a page saying why`, async () => {
      const provider = new TestProvider(`${documentOrigin}${path}`)
      await expect(
        new Client({ name: 'a', version: '1' }).connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider })),
      ).rejects.toThrow(UnauthorizedError)
      const page = await context.newPage()
      const res = await page.goto(provider.authorizationUrl!.href)
      expect(res?.status()).toBe(400)
      expect(new URL(page.url()).origin).toBe(authz.issuer)
      await expect(page.locator('main').textContent()).resolves.toContain(reason)
      if (SHOTS && path === '/mismatched.json') await page.screenshot({ path: `${SHOTS}/mcp-document-refused.png`, fullPage: true })
      await page.close()
    })
  }
})
