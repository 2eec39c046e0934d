// The deployment the server is built for: behind a reverse proxy that ends TLS, here nginx and
// Caddy from Debian's packages running the files in deploy/ (test/e2e/reverse-proxy.ts), with the
// issuer https://localhost:<proxy port> and TRUST_PROXY naming the proxy's address (127.0.0.1)
// alone. Through the proxy: discovery names the https issuer; a person signs in with the
// authorization code flow in Chromium and gets the `__Host-` cookies, Secure; the client address
// that client authentication blocks and rate limits count is the real client's, whatever
// X-Forwarded-For it sends; and a client that reaches the server directly is seen with its own
// address, its X-Forwarded-For ignored. Each request leaves from a loopback address of its own
// (127.0.0.11, …), so that the proxy's address and each client's can be told apart.
import { createHash, randomBytes } from 'node:crypto'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { basic, captureLogs, FORM, form } from '../helpers/app.js'
import { freePort } from '../helpers/free-port.js'
import { ALICE, signInAs, startAuthz, type Authz } from './authz-server.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'
import {
  makeCertificates,
  removeCertificates,
  send,
  startProxy,
  type ProxyName,
  type RunningProxy,
  type TestCertificates,
} from './reverse-proxy.js'
import { startSite, type Site } from './site.js'

warnIfNoChromium('the sign-in through a reverse proxy')

const PROXY = '127.0.0.1'
const ENV = { TRUST_PROXY: PROXY, CLIENT_AUTH_FAILURE_LIMIT: '3', RATE_LIMIT_API: '8' }

let certs: TestCertificates
let rp: Site
let browser: Browser | undefined
beforeAll(async () => {
  certs = await makeCertificates()
  rp = await startSite((_req, res) => res.end('client'))
  // Chromium trusts the test certificate, by its public key, and no other that fails validation.
  if (haveChromium) browser = await launchChromium([`--ignore-certificate-errors-spki-list=${certs.spkiHash}`])
})
afterAll(async () => {
  await browser?.close()
  await rp?.close()
  await removeCertificates(certs)
})

const seed = () => ({
  apiScopes: [{ name: 'orders.read' }],
  apiResources: [{ name: 'orders-api', scopes: ['orders.read'] }],
  identityResources: ['openid', 'profile'],
  clients: [
    {
      clientId: 'web',
      secrets: [{ value: 'web-secret' }],
      allowedGrantTypes: ['authorization_code'],
      allowedScopes: ['openid', 'profile'],
      redirectUris: [`${rp.origin}/cb`],
    },
    {
      clientId: 'backend',
      secrets: [{ value: 'backend-secret' }],
      allowedGrantTypes: ['client_credentials'],
      allowedScopes: ['orders.read'],
    },
  ],
  users: [ALICE],
})

describe.each<ProxyName>(['nginx', 'caddy'])('behind %s', (name) => {
  let authz: Authz
  let proxy: RunningProxy
  let logs: string[]
  let direct: string
  beforeAll(async () => {
    const port = await freePort()
    const captured = captureLogs({ logLevel: 'info' })
    logs = captured.logs
    authz = await startAuthz(seed(), { issuer: `https://localhost:${port}`, env: ENV, logger: captured.logger })
    direct = `http://127.0.0.1:${authz.port}`
    proxy = await startProxy(name, certs, port, authz.port)
  })
  afterAll(async () => {
    await proxy?.stop()
    await authz?.close()
  })

  const viaProxy = (path: string, opts: Parameters<typeof send>[1]) => send(`${proxy.origin}${path}`, { ca: certs.ca, ...opts })
  const audit = (event: string) => logs.map((l) => JSON.parse(l)).filter((l) => l.log === 'audit' && l.event === event)

  it('serves discovery over TLS with the https issuer, and HSTS', async () => {
    const res = await viaProxy('/.well-known/openid-configuration', { from: '127.0.0.2' })
    expect(res.status).toBe(200)
    expect(res.headers['strict-transport-security']).toBe('max-age=63072000')
    expect(JSON.parse(res.body)).toMatchObject({
      issuer: proxy.origin,
      authorization_endpoint: `${proxy.origin}/connect/authorize`,
      token_endpoint: `${proxy.origin}/connect/token`,
      jwks_uri: `${proxy.origin}/.well-known/openid-configuration/jwks`,
    })
  })

  it.skipIf(!haveChromium)(
    'signs a person in with the code flow in Chromium: __Host- cookies, Secure, and tokens of the https issuer',
    async () => {
      const ctx = await browser!.newContext()
      try {
        const page = await ctx.newPage()
        const verifier = randomBytes(32).toString('base64url')
        const authorize = new URL(`${proxy.origin}/connect/authorize`)
        authorize.search = new URLSearchParams({
          client_id: 'web',
          response_type: 'code',
          redirect_uri: `${rp.origin}/cb`,
          scope: 'openid profile',
          state: 'st-1',
          nonce: 'n-1',
          code_challenge: createHash('sha256').update(verifier).digest('base64url'),
          code_challenge_method: 'S256',
        }).toString()
        await page.goto(authorize.href)
        expect(new URL(page.url()).origin).toBe(proxy.origin)
        await signInAs(page, ALICE, `${rp.origin}/cb?**`)

        const back = new URL(page.url())
        expect(back.searchParams.get('state')).toBe('st-1')
        expect(back.searchParams.get('iss')).toBe(proxy.origin)
        // The browser kept them: a __Host- cookie is refused unless Secure, from https, Path=/ and no Domain.
        const cookies = await ctx.cookies(proxy.origin)
        expect(cookies.map((c) => c.name).sort()).toEqual(['__Host-authz-csrf', '__Host-authz-session'])
        for (const c of cookies) {
          expect(c, c.name).toMatchObject({ domain: 'localhost', path: '/', secure: true, httpOnly: true, sameSite: 'Lax' })
        }

        const token = await viaProxy('/connect/token', {
          from: '127.0.0.2',
          method: 'POST',
          headers: { ...FORM, authorization: basic('web', 'web-secret') },
          body: form({
            grant_type: 'authorization_code',
            code: back.searchParams.get('code')!,
            redirect_uri: `${rp.origin}/cb`,
            code_verifier: verifier,
          }),
        })
        expect(token.status).toBe(200)
        const idToken = JSON.parse(token.body).id_token as string
        const claims = JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString())
        expect(claims).toMatchObject({ iss: proxy.origin, aud: 'web', sub: ALICE.subjectId, nonce: 'n-1' })
      } finally {
        await ctx.close()
      }
    },
  )

  it('blocks failed client authentication at the real client address, never at the proxy’s or a forged one', async () => {
    const [a, b] = ['127.0.0.11', '127.0.0.12']
    const token = (via: 'proxy' | 'direct', from: string, secret: string, forwardedFor: string) => {
      const opts = {
        from,
        method: 'POST',
        headers: { ...FORM, authorization: basic('backend', secret), 'x-forwarded-for': forwardedFor },
        body: form({ grant_type: 'client_credentials' }),
      }
      return via === 'proxy' ? viaProxy('/connect/token', opts) : send(`${direct}/connect/token`, opts)
    }
    // Three wrong secrets from a, each claiming another address: the third blocks a.
    for (const [i, forged] of ['198.51.100.1', '198.51.100.2', '198.51.100.3'].entries()) {
      const res = await token('proxy', a, 'wrong', forged)
      expect(res.status).toBe(401)
      expect(res.headers['retry-after'] !== undefined).toBe(i === 2)
    }
    const blocked = 'too many failed client authentications from this address, retry later'
    // a, through the proxy, claiming to be b: still a, blocked.
    const asB = await token('proxy', a, 'backend-secret', b)
    expect(asB.status).toBe(401)
    expect(JSON.parse(asB.body)).toEqual({ error: 'invalid_client', error_description: blocked })
    // b through the proxy is not blocked: the proxy's own address was never counted.
    expect((await token('proxy', b, 'backend-secret', a)).status).toBe(200)
    // Straight to the server, bypassing the proxy, X-Forwarded-For is not believed either way.
    const directAsB = await token('direct', a, 'backend-secret', b)
    expect(directAsB.status).toBe(401)
    expect(JSON.parse(directAsB.body).error_description).toBe(blocked)
    expect((await token('direct', b, 'backend-secret', a)).status).toBe(200)

    // The audit log names a every time: the proxy's address and the forged ones never appear.
    expect(audit('client.auth_failed').map((e) => [e.address, e.reason])).toEqual([
      [a, 'bad_secret'],
      [a, 'bad_secret'],
      [a, 'bad_secret'],
      [a, 'blocked'],
      [a, 'blocked'],
    ])
    expect(audit('client.blocked').map((e) => [e.client_id, e.address])).toEqual([['backend', a]])
  })

  it('rate-limits the real client address: through the proxy, and straight to the server', async () => {
    const [c, d, e] = ['127.0.0.21', '127.0.0.22', '127.0.0.23']
    const userinfo = (via: 'proxy' | 'direct', from: string, forwardedFor: string) => {
      const opts = { from, headers: { 'x-forwarded-for': forwardedFor } }
      return via === 'proxy' ? viaProxy('/connect/userinfo', opts) : send(`${direct}/connect/userinfo`, opts)
    }
    for (const via of ['proxy', 'direct'] as const) {
      const from = via === 'proxy' ? c : e
      // RATE_LIMIT_API=8: eight requests, each claiming a new address, use up the real one's minute.
      for (let i = 1; i <= 8; i++) expect((await userinfo(via, from, `198.51.100.${i}`)).status).toBe(401)
      const ninth = await userinfo(via, from, '198.51.100.9')
      expect(ninth.status).toBe(429)
      expect(Number(ninth.headers['retry-after'])).toBeGreaterThan(0)
      expect(JSON.parse(ninth.body)).toEqual({
        error: 'temporarily_unavailable',
        error_description: 'too many requests from this address, retry later',
      })
    }
    // Another client through the same proxy has its own allowance.
    expect((await userinfo('proxy', d, c)).status).toBe(401)
  })
})
