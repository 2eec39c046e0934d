// CORS for browser-based clients (Fetch Standard §3.2): discovery and JWKS from any origin; the
// token, revocation, device authorization and userinfo endpoints only for the origins the client
// of the request lists (allowedCorsOrigins), errors included; nothing for anyone else, and never
// for introspection. Every answer says Vary: Origin, since it depends on the Origin header.
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BODY_LIMIT } from '../../src/app.js'
import { applySeed, validateSeed } from '../../src/seed/apply.js'
import { basic, createTestApp, form, FORM, type TestApp } from '../helpers/app.js'

const SPA = 'https://spa.example'
const OTHER_APP = 'https://other-app.example:8443'
const NOBODY = 'https://evil.example'
const CC = 'client_credentials'
const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code'

let authz: TestApp
beforeAll(async () => {
  authz = await createTestApp()
  await applySeed(authz.db, {
    apiScopes: [{ name: 'orders.read' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read'], secrets: [{ value: 'orders-secret' }] }],
    clients: [
      {
        clientId: 'spa',
        secrets: [{ value: 'spa-secret' }],
        allowedGrantTypes: [CC],
        allowedScopes: ['orders.read'],
        allowedCorsOrigins: [SPA],
      },
      {
        clientId: 'other-app',
        secrets: [{ value: 'other-secret' }],
        allowedGrantTypes: [CC],
        allowedScopes: ['orders.read'],
        allowedCorsOrigins: [OTHER_APP],
      },
      {
        clientId: 'gone',
        secrets: [{ value: 'gone-secret' }],
        allowedGrantTypes: [CC],
        allowedScopes: ['orders.read'],
        allowedCorsOrigins: ['https://gone.example'],
        enabled: false,
      },
      // A browser app with a user's tokens (minted here with the password grant, for brevity).
      {
        clientId: 'spa-user',
        requireClientSecret: false,
        allowedGrantTypes: ['password', DEVICE],
        allowedScopes: ['openid', 'profile'],
        allowedCorsOrigins: [SPA],
      },
    ],
    identityResources: ['openid', 'profile'],
    users: [{ subjectId: 'alice-1', username: 'alice', password: 'alice-pw', claims: { name: 'Alice Example' } }],
  })
})
afterAll(() => authz.close())

const preflight = (url: string, origin: string, extra: Record<string, string> = {}) =>
  authz.app.inject({
    method: 'OPTIONS',
    url,
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type', ...extra },
  })
const tokenFrom = (origin: string | undefined, id: string, secret: string, params: Record<string, string> = { grant_type: CC }) =>
  authz.app.inject({
    method: 'POST',
    url: '/connect/token',
    headers: { ...FORM, authorization: basic(id, secret), ...(origin ? { origin } : {}) },
    payload: form(params),
  })
const vary = (h: LightMyRequestResponse['headers']) =>
  String(h.vary ?? '')
    .toLowerCase()
    .split(/\s*,\s*/)

describe('discovery and JWKS: readable from any origin', () => {
  for (const url of ['/.well-known/openid-configuration', '/.well-known/openid-configuration/jwks']) {
    it(`GET ${url}`, async () => {
      const res = await authz.app.inject({ url, headers: { origin: NOBODY } })
      expect(res.statusCode).toBe(200)
      expect(res.headers['access-control-allow-origin']).toBe('*')
      expect(res.headers['access-control-allow-credentials']).toBeUndefined()
    })
    it(`preflight for ${url}, from any origin and from an opaque one (null)`, async () => {
      for (const origin of [NOBODY, 'null']) {
        const res = await preflight(url, origin, { 'access-control-request-method': 'GET' })
        expect(res.statusCode, origin).toBe(204)
        expect(res.headers['access-control-allow-origin'], origin).toBe('*')
        expect(res.headers['access-control-allow-methods'], origin).toBe('GET')
      }
    })
  }
})

describe('token endpoint', () => {
  it('answers a preflight from an origin some client lists', async () => {
    const res = await preflight('/connect/token', SPA)
    expect(res.statusCode).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe(SPA)
    expect(res.headers['access-control-allow-methods']).toBe('POST')
    expect(res.headers['access-control-allow-headers']).toBe('Authorization, Content-Type, DPoP')
    expect(res.headers['access-control-max-age']).toBe('600')
    expect(vary(res.headers)).toContain('origin')
    expect(res.headers['access-control-allow-credentials']).toBeUndefined()
  })

  it('answers no preflight from an origin no client lists, or only a disabled one', async () => {
    for (const origin of [NOBODY, 'https://gone.example']) {
      const res = await preflight('/connect/token', origin)
      expect(res.headers['access-control-allow-origin']).toBeUndefined()
      expect(res.statusCode).toBeLessThan(500)
    }
  })

  it("lets the client's own origin read its tokens", async () => {
    const res = await tokenFrom(SPA, 'spa', 'spa-secret')
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBe(SPA)
    expect(res.headers['access-control-expose-headers']).toBe('WWW-Authenticate, Retry-After, DPoP-Nonce')
    expect(vary(res.headers)).toContain('origin')
  })

  it('names the client of the request from client_id in the form too (public and post clients)', async () => {
    const res = await authz.app.inject({
      method: 'POST',
      url: '/connect/token',
      headers: { ...FORM, origin: SPA },
      payload: form({ grant_type: CC, client_id: 'spa', client_secret: 'spa-secret' }),
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBe(SPA)
  })

  it("lets the client's own origin read its errors: invalid_client with its challenge, unsupported_grant_type", async () => {
    const wrong = await tokenFrom(SPA, 'spa', 'not-the-secret')
    expect(wrong.statusCode).toBe(401)
    expect(wrong.json().error).toBe('invalid_client')
    expect(wrong.headers['access-control-allow-origin']).toBe(SPA)
    expect(wrong.headers['www-authenticate']).toMatch(/^Basic /)
    const grant = await tokenFrom(SPA, 'spa', 'spa-secret', { grant_type: 'password', username: 'x', password: 'y' })
    expect(grant.statusCode).toBe(400)
    expect(grant.headers['access-control-allow-origin']).toBe(SPA)
  })

  it("gives another client's origin nothing, even though that origin is listed (by someone else)", async () => {
    const res = await tokenFrom(OTHER_APP, 'spa', 'spa-secret')
    expect(res.statusCode).toBe(200) // the server answers; the browser keeps the answer from that page
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
    const mine = await tokenFrom(OTHER_APP, 'other-app', 'other-secret')
    expect(mine.headers['access-control-allow-origin']).toBe(OTHER_APP)
  })

  it('gives a disabled client or an unknown one nothing', async () => {
    expect((await tokenFrom('https://gone.example', 'gone', 'gone-secret')).headers['access-control-allow-origin']).toBeUndefined()
    expect((await tokenFrom(SPA, 'nobody', 'x')).headers['access-control-allow-origin']).toBeUndefined()
  })

  it('sends no CORS headers without an Origin (server-side clients)', async () => {
    const res = await tokenFrom(undefined, 'spa', 'spa-secret')
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('ignores a malformed Origin: no CORS headers, never a 5xx', async () => {
    for (const origin of [
      'null',
      `${SPA}/`,
      `${SPA}/path`,
      'HTTPS://SPA.EXAMPLE',
      'https://spa.example:443',
      'spa.example',
      'https://',
      'https://spa.example:99999',
      'javascript:alert(1)',
      'x'.repeat(5000),
    ]) {
      const res = await tokenFrom(origin, 'spa', 'spa-secret')
      expect(res.statusCode, origin).toBe(200)
      expect(res.headers['access-control-allow-origin'], origin).toBeUndefined()
      const pre = await preflight('/connect/token', origin)
      expect(pre.statusCode, origin).toBeLessThan(500)
      expect(pre.headers['access-control-allow-origin'], origin).toBeUndefined()
    }
  })
})

describe('revocation endpoint', () => {
  it("answers the client's own origin, and nobody else's", async () => {
    const access = (await tokenFrom(undefined, 'spa', 'spa-secret')).json().access_token as string
    expect((await preflight('/connect/revocation', SPA)).headers['access-control-allow-origin']).toBe(SPA)
    const revoke = (origin: string) =>
      authz.app.inject({
        method: 'POST',
        url: '/connect/revocation',
        headers: { ...FORM, origin, authorization: basic('spa', 'spa-secret') },
        payload: form({ token: access }),
      })
    const mine = await revoke(SPA)
    expect(mine.statusCode).toBe(200)
    expect(mine.headers['access-control-allow-origin']).toBe(SPA)
    expect((await revoke(NOBODY)).headers['access-control-allow-origin']).toBeUndefined()
  })
})

describe('introspection is for APIs, not browsers', () => {
  it('answers no preflight and sends no CORS headers, whatever the origin', async () => {
    expect((await preflight('/connect/introspect', SPA)).headers['access-control-allow-origin']).toBeUndefined()
    const res = await authz.app.inject({
      method: 'POST',
      url: '/connect/introspect',
      headers: { ...FORM, origin: SPA, authorization: basic('orders-api', 'orders-secret') },
      payload: form({ token: 'x' }),
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
  })
})

describe('seed: allowedCorsOrigins', () => {
  it('accepts origins and names the client and the entry of anything else', () => {
    expect(
      validateSeed({ clients: [{ clientId: 'a', allowedCorsOrigins: ['https://a.example', 'http://localhost:3000'] }] }).clients[0]
        ?.allowedCorsOrigins,
    ).toEqual(['https://a.example', 'http://localhost:3000'])
    for (const bad of [
      'https://a.example/',
      'https://a.example/app',
      'https://A.example',
      'ftp://a.example',
      '*',
      'a.example',
      'https://a.example:443',
    ]) {
      expect(() => validateSeed({ clients: [{ clientId: 'web-app', allowedCorsOrigins: ['https://ok.example', bad] }] }), bad).toThrow(
        `clients[0].allowedCorsOrigins[1]: client web-app: ${JSON.stringify(bad)} is not an origin`,
      )
    }
  })
})

const userToken = async () => {
  const res = await authz.app.inject({
    method: 'POST',
    url: '/connect/token',
    headers: FORM,
    payload: form({ grant_type: 'password', client_id: 'spa-user', username: 'alice', password: 'alice-pw', scope: 'openid profile' }),
  })
  return res.json().access_token as string
}
const userinfo = (origin: string, token?: string) =>
  authz.app.inject({ url: '/connect/userinfo', headers: { origin, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) } })

describe('userinfo: the origins of the client the token was issued to', () => {
  it('lets that origin read the claims; nobody else, even an origin another client lists', async () => {
    const token = await userToken()
    const mine = await userinfo(SPA, token)
    expect(mine.statusCode).toBe(200)
    expect(mine.json()).toEqual({ sub: 'alice-1', name: 'Alice Example' })
    expect(mine.headers['access-control-allow-origin']).toBe(SPA)
    expect(mine.headers['access-control-expose-headers']).toBe('WWW-Authenticate, Retry-After, DPoP-Nonce')
    expect(vary(mine.headers)).toContain('origin')
    for (const origin of [OTHER_APP, NOBODY]) {
      const res = await userinfo(origin, token)
      expect(res.headers['access-control-allow-origin'], origin).toBeUndefined()
      expect(vary(res.headers), origin).toContain('origin')
    }
    const pre = await preflight('/connect/userinfo', SPA, {
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'authorization',
    })
    expect(pre.statusCode).toBe(204)
    expect(pre.headers['access-control-allow-origin']).toBe(SPA)
    expect(pre.headers['access-control-allow-methods']).toBe('GET, POST')
  })

  it('a live token of another client: its errors are not readable from this origin either', async () => {
    const other = (await tokenFrom(undefined, 'other-app', 'other-secret')).json().access_token as string
    const res = await userinfo(SPA, other)
    expect(res.statusCode).toBe(403) // insufficient_scope: a client_credentials token has no openid
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
    expect((await userinfo(OTHER_APP, other)).headers['access-control-allow-origin']).toBe(OTHER_APP)
  })

  // RFC 6750 §3.1: the app learns from invalid_token that it needs a new token; a browser app
  // can only learn it if it may read the answer. A token that names no live client (expired,
  // revoked, not ours, none) leaves only the origin to go by: the answer holds nothing of
  // anyone's, so it is readable where the preflight was, by the origins some enabled client lists.
  it('an expired, revoked, unknown or missing token: a listed origin reads invalid_token and its challenge; others nothing', async () => {
    const revoked = await userToken()
    await authz.app.inject({
      method: 'POST',
      url: '/connect/revocation',
      headers: FORM,
      payload: form({ client_id: 'spa-user', token: revoked }),
    })
    const expired = await userToken()
    const now = authz.clock.now()
    authz.clock.advance(3601)
    try {
      for (const [what, token] of [
        ['expired', expired],
        ['revoked', revoked],
        ['unknown', 'not-a-token'],
        ['missing', undefined],
      ] as const) {
        const res = await userinfo(SPA, token)
        expect(res.statusCode, what).toBe(401)
        expect(res.json().error, what).toBe('invalid_token')
        expect(res.headers['www-authenticate'], what).toMatch(/^Bearer realm=/)
        expect(res.headers['access-control-allow-origin'], what).toBe(SPA)
        expect(res.headers['access-control-expose-headers'], what).toContain('WWW-Authenticate')
        expect(vary(res.headers), what).toContain('origin')
        expect((await userinfo(NOBODY, token)).headers['access-control-allow-origin'], what).toBeUndefined()
        expect((await userinfo('https://gone.example', token)).headers['access-control-allow-origin'], what).toBeUndefined()
      }
    } finally {
      authz.clock.set(now)
    }
  })
})

describe('every endpoint a browser app calls', () => {
  // For each: a request that succeeds and one that fails, for the client 'spa-user' (origin SPA).
  type Req = (origin: string | undefined) => Promise<LightMyRequestResponse>
  const h = (origin: string | undefined) => (origin === undefined ? {} : { origin })
  const post =
    (url: string, params: Record<string, string>): Req =>
    (origin) =>
      authz.app.inject({ method: 'POST', url, headers: { ...FORM, ...h(origin) }, payload: form(params) })
  const get =
    (url: string, headers: Record<string, string> = {}): Req =>
    (origin) =>
      authz.app.inject({ url, headers: { ...headers, ...h(origin) } })
  let token = ''
  beforeAll(async () => {
    token = await userToken()
  })
  const endpoints: { name: string; ok: Req; error?: [Req, number, string]; open?: true }[] = [
    { name: 'discovery', ok: get('/.well-known/openid-configuration'), open: true },
    { name: 'RFC 8414 metadata', ok: get('/.well-known/oauth-authorization-server'), open: true },
    { name: 'JWKS', ok: get('/.well-known/openid-configuration/jwks'), open: true },
    {
      name: 'token',
      ok: post('/connect/token', {
        grant_type: 'password',
        client_id: 'spa-user',
        username: 'alice',
        password: 'alice-pw',
        scope: 'openid',
      }),
      error: [
        post('/connect/token', { grant_type: 'refresh_token', client_id: 'spa-user', refresh_token: 'not-a-token' }),
        400,
        'invalid_grant',
      ],
    },
    {
      name: 'userinfo',
      ok: (o) => get('/connect/userinfo', { authorization: `Bearer ${token}` })(o),
      error: [get('/connect/userinfo', { authorization: 'Bearer not-a-token' }), 401, 'invalid_token'],
    },
    {
      name: 'revocation',
      ok: post('/connect/revocation', { client_id: 'spa-user', token: 'not-a-token' }),
      error: [post('/connect/revocation', { client_id: 'spa-user' }), 400, 'invalid_request'],
    },
    {
      name: 'device authorization',
      ok: post('/connect/deviceauthorization', { client_id: 'spa-user', scope: 'openid' }),
      error: [post('/connect/deviceauthorization', { client_id: 'spa-user', scope: 'orders.read' }), 400, 'invalid_scope'],
    },
  ]
  for (const e of endpoints) {
    it(`${e.name}: the app's origin reads the answer${e.error ? ` and ${e.error[2]}` : ''}; an unlisted origin nothing; Vary: Origin`, async () => {
      const ok = await e.ok(SPA)
      expect(ok.statusCode).toBe(200)
      expect(ok.headers['access-control-allow-origin']).toBe(e.open ? '*' : SPA)
      expect(vary(ok.headers)).toContain('origin')
      if (e.error) {
        const [req, status, code] = e.error
        const err = await req(SPA)
        expect({ status: err.statusCode, error: err.json().error }).toEqual({ status, error: code })
        expect(err.headers['access-control-allow-origin']).toBe(SPA)
        expect(err.headers['access-control-expose-headers']).toBe('WWW-Authenticate, Retry-After, DPoP-Nonce')
        expect(vary(err.headers)).toContain('origin')
      }
      for (const req of [e.ok, ...(e.error ? [e.error[0]] : [])]) {
        const unlisted = await req(NOBODY)
        expect(unlisted.headers['access-control-allow-origin']).toBe(e.open ? '*' : undefined)
        expect(vary(unlisted.headers)).toContain('origin')
        // Without an Origin the answer has no CORS headers, so a cache must key on Origin.
        const server = await req(undefined)
        expect(server.headers['access-control-allow-origin']).toBeUndefined()
        expect(vary(server.headers)).toContain('origin')
      }
    })

    it(`${e.name}: a malformed Origin gets no CORS headers and no 5xx`, async () => {
      // The error request where there is one: the same decision, without a password check each time.
      const req = e.error?.[0] ?? e.ok
      for (const origin of [
        `${SPA}/`,
        'HTTPS://SPA.EXAMPLE',
        'spa.example',
        'https://spa.example:99999',
        'javascript:alert(1)',
        'x'.repeat(5000),
      ]) {
        const res = await req(origin)
        expect(res.statusCode, origin).toBeLessThan(500)
        expect(res.headers['access-control-allow-origin'], origin).toBeUndefined()
      }
    })

    // Origin: null is a page with an opaque origin (a sandboxed iframe, file://). The Fetch
    // Standard's CORS check lets `*` cover it; the public documents answer `*` to it, but no client
    // lists `null` (it names no page in particular), so the client endpoints never do.
    it(`${e.name}: Origin null ${e.open ? 'reads it (*)' : 'gets no CORS headers'}`, async () => {
      const res = await (e.error?.[0] ?? e.ok)('null')
      expect(res.statusCode).toBeLessThan(500)
      expect(res.headers['access-control-allow-origin']).toBe(e.open ? '*' : undefined)
      expect(vary(res.headers)).toContain('origin')
    })
  }
})

// Answers made before the CORS decision at preHandler, or where the request names no client: the
// per-address rate limit (onRequest), a body too large or unparsable (content-type parsing), the
// edge's refusals (onRequest), Basic credentials that cannot be read, no client authentication at
// all. None holds anything of any client's, so like a preflight they are readable by the origins
// some enabled client lists, with Retry-After and WWW-Authenticate exposed; the public documents'
// by any origin. Without that the browser app sees a network error and cannot tell "wait" from "fix
// the request".
describe('answers made before the client of the request is known', () => {
  let limited: TestApp // RATE_LIMIT_API=1: the second request from an address to an endpoint within a minute is refused
  beforeAll(async () => {
    limited = await createTestApp({ env: { RATE_LIMIT_API: '1' }, testDb: authz.testDb })
  })
  afterAll(() => limited?.close())

  type Send = (headers: Record<string, string>) => Promise<LightMyRequestResponse>
  const token =
    (payload: string, headers: Record<string, string> = FORM, url = '/connect/token'): Send =>
    (h) =>
      authz.app.inject({ method: 'POST', url, headers: { ...headers, ...h }, payload })
  const cc = form({ grant_type: CC })
  const MALFORMED = [
    'null',
    `${SPA}/`,
    'HTTPS://SPA.EXAMPLE',
    'spa.example',
    'https://spa.example:99999',
    'javascript:alert(1)',
    'x'.repeat(5000),
  ]
  const invalid = (error_description: string) => ({ error: 'invalid_request', error_description })

  /** From a listed origin: readable, its headers exposed; an unlisted one, a malformed one, none: nothing. Vary: Origin always. */
  async function expectEarly(send: Send, status: number, body: unknown, exposed: Record<string, RegExp> = {}) {
    for (const origin of [SPA, OTHER_APP]) {
      const res = await send({ origin })
      expect({ status: res.statusCode, body: res.json() }, origin).toEqual({ status, body })
      expect(res.headers['access-control-allow-origin'], origin).toBe(origin)
      expect(res.headers['access-control-expose-headers'], origin).toBe('WWW-Authenticate, Retry-After, DPoP-Nonce')
      expect(res.headers['access-control-allow-credentials'], origin).toBeUndefined()
      expect(vary(res.headers), origin).toContain('origin')
      for (const [name, value] of Object.entries(exposed)) expect(res.headers[name], name).toMatch(value)
    }
    for (const origin of [NOBODY, 'https://gone.example', ...MALFORMED]) {
      const res = await send({ origin })
      expect(res.statusCode, origin).toBe(status)
      expect(res.headers['access-control-allow-origin'], origin).toBeUndefined()
      expect(res.headers['access-control-expose-headers'], origin).toBeUndefined()
      expect(vary(res.headers), origin).toContain('origin')
    }
    const server = await send({})
    expect(server.statusCode).toBe(status)
    expect(server.headers['access-control-allow-origin']).toBeUndefined()
    expect(vary(server.headers)).toContain('origin')
  }

  it("token: the rate limit's 429, and its Retry-After", async () => {
    let n = 0
    // A fresh address each time: its first request passes, its second is over the limit.
    const send: Send = async (headers) => {
      const remoteAddress = `192.0.2.${++n}`
      const call = () =>
        limited.app.inject({
          method: 'POST',
          url: '/connect/token',
          remoteAddress,
          headers: { ...FORM, ...headers },
          payload: form({ grant_type: CC, client_id: 'spa', client_secret: 'spa-secret' }),
        })
      expect((await call()).statusCode).toBe(200)
      return call()
    }
    await expectEarly(
      send,
      429,
      { error: 'temporarily_unavailable', error_description: 'too many requests from this address, retry later' },
      { 'retry-after': /^[1-9][0-9]*$/ },
    )
  })

  it('token: a body too large', async () => {
    await expectEarly(token(`${cc}&x=${'a'.repeat(BODY_LIMIT)}`), 400, invalid('request body too large'))
  })

  it('token: a body of another type, an unparsable JSON body', async () => {
    await expectEarly(
      token('<a', { 'content-type': 'text/xml' }),
      400,
      invalid('unsupported content type: use application/x-www-form-urlencoded'),
    )
    await expectEarly(token('{"grant_type":', { 'content-type': 'application/json' }), 400, invalid('malformed request body'))
  })

  it('token: Basic credentials that cannot be read (with the Basic challenge), no client authentication at all', async () => {
    await expectEarly(
      token(cc, { ...FORM, authorization: `Basic ${Buffer.from('no-colon').toString('base64')}` }),
      401,
      { error: 'invalid_client', error_description: 'malformed Basic credentials' },
      { 'www-authenticate': /^Basic realm=/ },
    )
    await expectEarly(token(cc, { ...FORM, authorization: basic('spa\u0001', 'x') }), 400, invalid('client_id contains control characters'))
    await expectEarly(token(cc), 401, { error: 'invalid_client', error_description: 'client authentication is required' })
  })

  it("token: the edge's refusal of a control character in the query string", async () => {
    await expectEarly(token(cc, FORM, '/connect/token?x=%01'), 400, invalid('a parameter contains control characters'))
  })

  it('revocation: an unparsable body; userinfo: the rate limit', async () => {
    await expectEarly(token('{', { 'content-type': 'application/json' }, '/connect/revocation'), 400, invalid('malformed request body'))
    let n = 0
    const send: Send = async (headers) => {
      const remoteAddress = `198.51.100.${++n}`
      const call = () =>
        limited.app.inject({ url: '/connect/userinfo', remoteAddress, headers: { ...headers, authorization: 'Bearer not-a-token' } })
      expect((await call()).statusCode).toBe(401)
      return call()
    }
    await expectEarly(
      send,
      429,
      { error: 'temporarily_unavailable', error_description: 'too many requests from this address, retry later' },
      { 'retry-after': /^[1-9][0-9]*$/ },
    )
  })

  it('the public documents: readable from any origin, an opaque one (null) included', async () => {
    for (const url of ['/.well-known/openid-configuration?x=%01', '/.well-known/openid-configuration/jwks?x=%01']) {
      for (const origin of [NOBODY, 'null']) {
        const res = await authz.app.inject({ url, headers: { origin } })
        expect({ status: res.statusCode, body: res.json() }, url).toEqual({
          status: 400,
          body: invalid('a parameter contains control characters'),
        })
        expect(res.headers['access-control-allow-origin'], url).toBe('*')
        expect(vary(res.headers), url).toContain('origin')
      }
      const malformed = await authz.app.inject({ url, headers: { origin: 'HTTPS://SPA.EXAMPLE' } })
      expect(malformed.statusCode).toBe(400)
      expect(malformed.headers['access-control-allow-origin']).toBeUndefined()
    }
  })

  it('introspection still sends no CORS headers, not even on its early answers', async () => {
    const res = await authz.app.inject({
      method: 'POST',
      url: '/connect/introspect',
      headers: { 'content-type': 'application/json', origin: SPA },
      payload: '{',
    })
    expect(res.statusCode).toBe(400)
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
    expect(res.headers['access-control-expose-headers']).toBeUndefined()
  })
})
