// Control characters are refused at the edge (ARCHITECTURE.md "Wire rules"): a NUL byte, or any other
// control character, in a form, in Basic credentials, in a query string, in a cookie or inside a
// signed JWT is invalid_request before anything reaches PostgreSQL (whose text type cannot hold
// NUL), so no input makes the server answer 5xx.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { basic, FORM } from '../helpers/app.js'
import { applySeed } from '../../src/seed/apply.js'
import { approvalPath, decide, lastRequestId } from '../flows/ciba/approve-helper.js'
import { BANK, CIBA, createCibaTestApp, poll, signJwt, startCiba, TEST_ISSUER, type CibaTestApp } from '../flows/ciba/harness.js'
import { expectNoServerError, expectOAuthError } from '../helpers/error-shape.js'
import { csrfIn, withCookies } from '../helpers/http.js'
import { signInPath } from '../helpers/sign-in.js'

let authz: CibaTestApp
beforeAll(async () => {
  authz = await createCibaTestApp({
    // Nothing blocks the fuzz from reaching deep: no throttles; the password check fails fast after one failure.
    env: { LOG_LEVEL: 'warn', CLIENT_AUTH_FAILURE_LIMIT: '1000', RATE_LIMIT_SIGN_IN: '0', LOCKOUT_THRESHOLD: '1' },
  })
})
afterAll(() => authz.close())

const OAUTH_ENDPOINTS = ['/connect/token', '/connect/introspect', '/connect/revocation', '/connect/ciba']
const raw = (params: Record<string, string>) =>
  Object.entries(params)
    .map(([k, v]) => `${k}=${v}`)
    .join('&')
const invalid = (description: string) => ({ error: 'invalid_request', error_description: description })

/** No request was answered with a 5xx: nothing was logged as a failed request. */
function expectNoFailureLogged() {
  expect(authz.logs.filter((l) => l.includes('"msg":"request failed"'))).toEqual([])
}

async function post(url: string, payload: string, headers: Record<string, string> = {}) {
  return authz.app.inject({ method: 'POST', url, headers: { ...FORM, ...headers }, payload })
}

describe('control characters at the edge', () => {
  it('refuses a NUL in client_id, in the form or in Basic credentials, at every endpoint', async () => {
    for (const url of OAUTH_ENDPOINTS) {
      const form = await post(
        url,
        raw({ grant_type: 'client_credentials', client_id: 'bank%00', client_secret: 'bank-secret', token: 'x' }),
      )
      expectOAuthError(form, url)
      expect({ url, status: form.statusCode, body: form.json() }).toEqual({
        url,
        status: 400,
        body: invalid('client_id contains control characters'),
      })
      const header = await post(url, 'grant_type=client_credentials&token=x', { authorization: basic('bank\u0000', 'bank-secret') })
      expect({ url, status: header.statusCode, body: header.json() }).toEqual({
        url,
        status: 400,
        body: invalid('client_id contains control characters'),
      })
      const secret = await post(url, 'grant_type=client_credentials&token=x', { authorization: basic('bank', 'bank-secret\u0001') })
      expect({ url, status: secret.statusCode, body: secret.json() }).toEqual({
        url,
        status: 400,
        body: invalid('client_secret contains control characters'),
      })
    }
    expectNoFailureLogged()
  })

  it('refuses a NUL in login_hint and acr_values, at the CIBA and token endpoints, storing nothing', async () => {
    await authz.db.query('DELETE FROM ciba_requests')
    const ciba = raw({ client_id: 'bank', client_secret: 'bank-secret', scope: 'openid' })
    for (const [extra, name] of [
      ['login_hint=alice%00', 'login_hint'],
      ['login_hint=alice&acr_values=tenant:acme%00', 'acr_values'],
    ]) {
      const res = await post('/connect/ciba', `${ciba}&${extra}`)
      expectOAuthError(res, extra!)
      expect(res.json()).toEqual(invalid(`${name} contains control characters`))
    }
    const token = await post(
      '/connect/token',
      raw({ grant_type: 'client_credentials', client_id: 'cc-only', client_secret: 'cc-secret', acr_values: 'tenant:a%00' }),
    )
    expect({ status: token.statusCode, body: token.json() }).toEqual({
      status: 400,
      body: invalid('acr_values contains control characters'),
    })
    expect((await authz.db.query('SELECT count(*)::int AS n FROM ciba_requests')).rows).toEqual([{ n: 0 }])
    expectNoFailureLogged()
  })

  it('refuses control characters and unpaired surrogates inside a request object and a login_hint_token', async () => {
    const object = (claims: Record<string, unknown>) =>
      signJwt(authz, authz.clientKey, { iss: 'bank', aud: TEST_ISSUER, jti: randomUUID(), scope: 'openid', login_hint: 'alice', ...claims })
    const cases: Array<[Record<string, string>, string]> = [
      [{ ...BANK, request: await object({ jti: 'j\u0000' }) }, 'invalid request object: jti contains control characters'],
      [{ ...BANK, request: await object({ login_hint: 'alice\u0000' }) }, 'login_hint contains control characters'],
      [{ ...BANK, request: await object({ binding_message: 'ok', acr_values: '\ud800' }) }, 'acr_values contains control characters'],
      [
        {
          ...BANK,
          scope: 'openid',
          login_hint_token: await signJwt(authz, authz.clientKey, { aud: TEST_ISSUER, jti: randomUUID(), sub: 'alice\u0000' }),
        },
        'invalid login_hint_token: sub contains control characters',
      ],
    ]
    for (const [params, description] of cases) {
      const res = await startCiba(authz, params)
      expectOAuthError(res, description)
      expect(res.json()).toEqual(invalid(description))
    }
    expect((await authz.db.query('SELECT count(*)::int AS n FROM used_jtis')).rows).toEqual([{ n: 0 }])
    expectNoFailureLogged()
  })

  it('refuses control characters in a query string and in a cookie, on API and page routes alike', async () => {
    const token = await post(
      '/connect/token?client_id=x%00',
      raw({ grant_type: 'client_credentials', client_id: 'cc-only', client_secret: 'cc-secret' }),
    )
    expect({ status: token.statusCode, body: token.json() }).toEqual({
      status: 400,
      body: invalid('client_id contains control characters'),
    })
    expectOAuthError(token, 'query')
    const discovery = await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration?x=%1b' })
    expect({ status: discovery.statusCode, body: discovery.json() }).toEqual({
      status: 400,
      body: invalid('a parameter contains control characters'),
    })
    // The page routes answer the same error (as JSON today, as a page where a route renders errors).
    for (const [url, cookie] of [
      ['/ciba/approve?request=x%00', ''],
      ['/ciba/approve?request=abc', 'other=1; __Host-authz-session=%00'],
    ]) {
      const res = await authz.app.inject({ method: 'GET', url: url!, headers: cookie ? { cookie } : {} })
      expect(res.statusCode, url).toBe(400)
      expectNoServerError(res, url!)
      if (String(res.headers['content-type']).startsWith('application/json')) {
        expect(res.json()).toEqual(invalid(cookie ? 'a cookie contains control characters' : 'request contains control characters'))
      }
    }
    // Another application's cookie on the same site is never read, so it is never refused.
    const foreign = await authz.app.inject({
      method: 'GET',
      url: '/ciba/approve?request=abc',
      headers: { cookie: 'prefs=a%0Ab; __Host-authz-csrf=ok' },
    })
    expect(foreign.statusCode).toBe(404)
    expect(foreign.headers['content-type']).toBe('text/html; charset=utf-8')
    expectNoFailureLogged()
  })

  it('answers a NUL in the sign-in form with the sign-in page, signing nobody in', async () => {
    await authz.db.query('DELETE FROM ciba_requests')
    expect((await startCiba(authz, { ...BANK, scope: 'openid', login_hint: 'alice' })).statusCode).toBe(200)
    const id = await lastRequestId(authz)
    const page = await authz.app.inject({ method: 'GET', url: signInPath(approvalPath(id)) })
    const cookie = withCookies('', page.headers['set-cookie'])
    for (const [username, password] of [
      ['alice%00', 'alice-pw'],
      ['alice', 'alice-pw%00'],
    ]) {
      const res = await post(signInPath(approvalPath(id)), raw({ csrf: csrfIn(page.body), username: username!, password: password! }), {
        cookie,
      })
      expectNoServerError(res, `${username}/${password}`)
      expect(res.statusCode).toBeGreaterThanOrEqual(400)
      expect(res.headers['set-cookie'] ?? '').not.toContain('authz-session=')
    }
    expect((await authz.db.query('SELECT count(*)::int AS n FROM user_sessions')).rows).toEqual([{ n: 0 }])
    expect((await authz.db.query('SELECT status FROM ciba_requests WHERE id = $1', [id])).rows).toEqual([{ status: 'pending' }])
    expectNoFailureLogged()
  })
})

// ---------------------------------------------------------------------------------------------
// Fuzz: many malformed values in every position of every endpoint; never 5xx, always a
// well-formed answer. Values carry a marker that no error description may echo.

const MARK = 'zqmark'
/** Raw (already form-encoded) values tried in every position: NUL, an encoded surrogate, invalid UTF-8, a huge value. */
const EVERYWHERE: string[] = [`${MARK}%00`, `${MARK}%ED%A0%80`, `${MARK}%FF%FE`, `${MARK}${'y'.repeat(60_000)}`]
/** Raw values each tried in one position per endpoint, in turn: every other C0 control, and more. */
const ROTATED: string[] = [
  ...Array.from({ length: 31 }, (_, i) => `${MARK}%${(i + 1).toString(16).padStart(2, '0')}x`),
  `%00${MARK}`,
  `${MARK}%7F`,
  `${MARK}%C2%85`,
  `${MARK}%C2%9F`, // DEL, NEL and another C1 control
  `${MARK}%ED%B0%80x`,
  `%ED%A0%80%ED%B0%80${MARK}`, // surrogates encoded in UTF-8 (invalid)
  `${MARK}%C0%80`,
  `${MARK}%E0%A4%A`,
  `${MARK}%`,
  `${MARK}%%`,
  `${MARK}%G1`,
  `%C3${MARK}`, // invalid UTF-8 and escapes
  `${MARK}%E2%80%AE`,
  `${MARK}%E2%80%8B`,
  `${MARK}%F0%9F%99%82`,
  `${MARK}%22%5C%3Cscript%3E`,
  `${MARK}+%20+`, // bidi, zero width, emoji, quotes
  `${MARK}${'x'.repeat(5_000)}`,
  `${MARK}${'%00'.repeat(3_000)}`, // long values
]

interface Target {
  name: string
  method: 'GET' | 'POST'
  url: string
  /** A valid request's form parameters (POST) or query parameters (GET). */
  params: Record<string, string>
  headers?: Record<string, string>
}

/** Tokens from a whole CIBA flow, so that the refresh and token exchange targets reach the grants themselves. */
async function userTokens(): Promise<{ access_token: string; refresh_token: string }> {
  await applySeed(authz.db, { clients: [EDGE_CLIENT] })
  const started = await startCiba(authz, { ...EDGE, scope: 'openid offline_access', login_hint: 'alice' })
  expect((await decide(authz, await lastRequestId(authz), 'approve')).statusCode).toBe(200)
  const tokens = await poll(authz, started.json().auth_req_id, EDGE)
  expect(tokens.statusCode).toBe(200)
  return tokens.json()
}

const EDGE = { client_id: 'edge', client_secret: 'edge-secret' }
const TX = 'urn:ietf:params:oauth:grant-type:token-exchange'
const EDGE_CLIENT = {
  clientId: 'edge',
  secrets: [{ value: 'edge-secret' }],
  allowedGrantTypes: [CIBA, 'refresh_token', 'password', TX],
  allowedScopes: ['openid', 'email', 'offline_access'],
  allowOfflineAccess: true,
  allowedSubjectTokenClients: ['edge'],
}

async function targets(): Promise<Target[]> {
  await authz.db.query('DELETE FROM ciba_requests')
  const user = await userTokens()
  const started = await startCiba(authz, { ...BANK, scope: 'openid email', login_hint: 'alice' })
  const authReqId = started.json().auth_req_id as string
  const requestId = await lastRequestId(authz)
  const page = await authz.app.inject({ method: 'GET', url: signInPath(approvalPath(requestId)) })
  const cookie = withCookies('', page.headers['set-cookie'])
  const cc = { client_id: 'cc-only', client_secret: 'cc-secret' }
  const token = (await post('/connect/token', raw({ ...cc, grant_type: 'client_credentials' }))).json().access_token as string
  return [
    {
      name: 'client_credentials',
      method: 'POST',
      url: '/connect/token',
      params: { ...cc, grant_type: 'client_credentials', scope: 'orders.read', resource: 'orders-api', acr_values: 'x' },
    },
    {
      name: 'refresh_token',
      method: 'POST',
      url: '/connect/token',
      params: { ...EDGE, grant_type: 'refresh_token', refresh_token: user.refresh_token, scope: 'openid' },
    },
    {
      name: 'password',
      method: 'POST',
      url: '/connect/token',
      params: { ...EDGE, grant_type: 'password', username: 'alice', password: 'alice-pw', scope: 'openid' },
    },
    {
      name: 'token exchange',
      method: 'POST',
      url: '/connect/token',
      params: {
        ...EDGE,
        grant_type: TX,
        subject_token: user.access_token,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        scope: 'openid',
      },
    },
    { name: 'ciba grant', method: 'POST', url: '/connect/token', params: { ...BANK, grant_type: CIBA, auth_req_id: authReqId } },
    {
      name: 'introspect',
      method: 'POST',
      url: '/connect/introspect',
      params: { client_id: 'orders-api', client_secret: 'api-secret', token, token_type_hint: 'access_token' },
    },
    { name: 'revocation', method: 'POST', url: '/connect/revocation', params: { ...cc, token, token_type_hint: 'access_token' } },
    {
      name: 'ciba',
      method: 'POST',
      url: '/connect/ciba',
      params: {
        ...BANK,
        scope: 'openid email',
        login_hint: 'alice',
        binding_message: 'hi',
        acr_values: 'idp:corp-ad',
        requested_expiry: '60',
        user_code: '1',
      },
    },
    { name: 'approval page', method: 'GET', url: '/ciba/approve', params: { request: requestId }, headers: { cookie } },
    {
      name: 'sign-in',
      method: 'POST',
      url: signInPath(approvalPath(requestId)),
      params: { csrf: csrfIn(page.body), username: 'alice', password: 'alice-pw' },
      headers: { cookie },
    },
    { name: 'decision', method: 'POST', url: approvalPath(requestId), params: { csrf: 'x', decision: 'approve' }, headers: { cookie } },
    { name: 'discovery', method: 'GET', url: '/.well-known/openid-configuration', params: { x: '1' } },
    { name: 'jwks', method: 'GET', url: '/.well-known/openid-configuration/jwks', params: { x: '1' } },
    { name: 'health', method: 'GET', url: '/health/ready', params: { x: '1' } },
    { name: 'unknown route', method: 'GET', url: '/nowhere', params: { x: '1' } },
  ]
}

/** Every way one malformed value can be put into a request to this target. */
function* variants(
  target: Target,
  value: string,
): Generator<{ where: string; method: 'GET' | 'POST'; url: string; payload?: string; headers: Record<string, string> }> {
  const enc = (p: Record<string, string>) => raw(Object.fromEntries(Object.entries(p).map(([k, v]) => [k, encodeURIComponent(v)])))
  const send = (where: string, params: string, headers: Record<string, string> = {}) => {
    const base = { ...target.headers, ...headers }
    if (target.method === 'GET') return { where, method: target.method, url: `${target.url}?${params}`, headers: base }
    return { where, method: target.method, url: target.url, payload: params, headers: { ...FORM, ...base } }
  }
  for (const key of Object.keys(target.params)) {
    yield send(`${key}=`, enc({ ...target.params, [key]: '' }).replace(`${key}=`, `${key}=${value}`))
  }
  yield send('unknown parameter', `${enc(target.params)}&extra=${value}`)
  yield send('parameter name', `${enc(target.params)}&${value}=1`)
  const query = send('query', enc(target.params))
  yield { ...query, url: `${query.url}${query.url.includes('?') ? '&' : '?'}q=${value}` }
  yield send('cookie', enc(target.params), { cookie: `__Host-authz-session=${value.slice(0, 4000)}` })
  if (target.method === 'POST') {
    // The Basic credentials carry the value form-encoded, as RFC 6749 §2.3.1 has it.
    const { client_id: _id, client_secret: _secret, ...rest } = target.params
    yield send('Basic id', enc(rest), { authorization: `Basic ${Buffer.from(`${value.slice(0, 300)}:secret`).toString('base64')}` })
    yield send('Basic secret', enc(rest), { authorization: `Basic ${Buffer.from(`bank:${value.slice(0, 300)}`).toString('base64')}` })
  }
}

/** Runs `fn`; a failed expectation is kept as one line, so that one run lists every failure. */
function collect(failures: string[], fn: () => void) {
  try {
    fn()
  } catch (err) {
    if (failures.length < 50) failures.push((err as Error).message.split('\n')[0]!)
  }
}

describe('fuzz: malformed input at every endpoint', () => {
  it('never answers 5xx, and every error is well formed and echoes nothing', { timeout: 300_000 }, async () => {
    let sent = 0
    const failures: string[] = []
    for (const target of await targets()) {
      const rotated = ROTATED.map((value, i) => [...variants(target, value)].filter((_, j, all) => j === i % all.length))
      const everywhere = EVERYWHERE.map((value) => [...variants(target, value)])
      for (const v of [...rotated, ...everywhere].flat()) {
        const res = await authz.app.inject({
          method: v.method,
          url: v.url,
          headers: v.headers,
          ...(v.payload !== undefined ? { payload: v.payload } : {}),
        })
        collect(failures, () => expectNoServerError(res, `${target.name}, ${v.where}`, MARK))
        sent++
      }
      for (const key of Object.keys(target.params)) {
        const repeated = `${raw(target.params)}&${key}=${MARK}`
        const res =
          target.method === 'GET'
            ? await authz.app.inject({ method: 'GET', url: `${target.url}?${repeated}`, headers: target.headers ?? {} })
            : await authz.app.inject({ method: 'POST', url: target.url, headers: { ...FORM, ...target.headers }, payload: repeated })
        collect(failures, () => expectNoServerError(res, `${target.name}, ${key} repeated`, MARK))
        sent++
      }
    }
    expect(failures).toEqual([])
    expect(sent).toBeGreaterThan(1_000)
    expectNoFailureLogged()
  })
})
