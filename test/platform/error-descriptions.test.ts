// RFC 6749 §5.2: error_description holds only %x20-21 / %x23-5B / %x5D-7E, and ours is a fixed
// sentence that never repeats the request (ARCHITECTURE.md "Wire rules"). Bad input of every kind, at every
// endpoint, carrying a marker that no answer may repeat: every error body is checked for shape,
// charset, and the marker.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../src/seed/apply.js'
import { basic, FORM, form } from '../helpers/app.js'
import { lastRequestId } from '../flows/ciba/approve-helper.js'
import { BANK, CIBA, createCibaTestApp, signJwt, startCiba, TEST_ISSUER, type CibaTestApp } from '../flows/ciba/harness.js'
import { expectOAuthError } from '../helpers/error-shape.js'

let authz: CibaTestApp
beforeAll(async () => {
  authz = await createCibaTestApp({ env: { LOG_LEVEL: 'warn', CLIENT_AUTH_FAILURE_LIMIT: '1000' } })
  await applySeed(authz.db, {
    clients: [
      {
        clientId: 'rt',
        secrets: [{ value: 'rt-secret' }],
        allowedGrantTypes: ['refresh_token', 'client_credentials', 'password', TX],
        allowedScopes: ['orders.read'],
        allowOfflineAccess: true,
      },
    ],
  })
})
afterAll(() => authz.close())

const M = 'ZqMark'
const TX = 'urn:ietf:params:oauth:grant-type:token-exchange'
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token'
const CC = { client_id: 'cc-only', client_secret: 'cc-secret' }
const RT = { client_id: 'rt', client_secret: 'rt-secret' }
const API = { client_id: 'orders-api', client_secret: 'api-secret' }

interface Case {
  name: string
  method?: 'GET' | 'POST'
  url: string
  params?: Record<string, string>
  headers?: Record<string, string>
  /** A raw body instead of the form of `params`. */
  payload?: string
  error: string
}

async function cases(): Promise<Case[]> {
  await authz.db.query('DELETE FROM ciba_requests')
  const pending = (await startCiba(authz, { ...BANK, scope: 'openid', login_hint: 'alice' })).json().auth_req_id as string
  await lastRequestId(authz)
  const token = (p: Record<string, string>, error: string, name: string, headers?: Record<string, string>): Case => ({
    name: `token: ${name}`,
    url: '/connect/token',
    params: p,
    error,
    ...(headers ? { headers } : {}),
  })
  const ciba = (p: Record<string, string>, error: string, name: string): Case => ({
    name: `ciba: ${name}`,
    url: '/connect/ciba',
    params: { ...BANK, ...p },
    error,
  })
  const ok = { scope: 'openid', login_hint: 'alice' }
  const jwt = (claims: Record<string, unknown>) =>
    signJwt(authz, authz.clientKey, { iss: 'bank', aud: TEST_ISSUER, jti: randomUUID(), ...claims })
  return [
    // Client authentication, at the token endpoint (the same code serves every endpoint).
    token({ grant_type: 'client_credentials' }, 'invalid_client', 'no credentials'),
    token({ grant_type: 'client_credentials', client_id: M, client_secret: M }, 'invalid_client', 'unknown client'),
    token({ grant_type: 'client_credentials', client_id: 'cc-only', client_secret: M }, 'invalid_client', 'wrong secret'),
    token({ grant_type: 'client_credentials' }, 'invalid_client', 'malformed Basic', { authorization: `Basic ${M}` }),
    token({ grant_type: 'client_credentials', client_secret: M }, 'invalid_request', 'two methods', {
      authorization: basic('cc-only', 'cc-secret'),
    }),
    token({ grant_type: 'client_credentials', client_id: M }, 'invalid_request', 'client_id mismatch', {
      authorization: basic('cc-only', 'cc-secret'),
    }),
    token({ ...CC, grant_type: 'client_credentials', client_assertion: M }, 'invalid_request', 'client_assertion'),
    // The form itself.
    token({ ...CC }, 'invalid_request', 'no grant_type'),
    token({ ...CC, grant_type: M }, 'unsupported_grant_type', 'unknown grant_type'),
    token({ ...CC, grant_type: 'password', username: M, password: M }, 'unauthorized_client', 'grant not allowed'),
    {
      name: 'token: repeated',
      url: '/connect/token',
      payload: `${form(CC)}&grant_type=client_credentials&${M}=1&${M}=2`,
      error: 'invalid_request',
    },
    token({ ...CC, grant_type: 'client_credentials', scope: '' }, 'invalid_request', 'empty'),
    {
      name: 'token: empty unknown',
      url: '/connect/token',
      payload: `${form(CC)}&grant_type=client_credentials&${M}=`,
      error: 'invalid_request',
    },
    token({ ...CC, grant_type: 'client_credentials', scope: M.repeat(60) }, 'invalid_request', 'too long'),
    token({ ...CC, grant_type: 'client_credentials', [M]: M.repeat(20) }, 'invalid_request', 'unknown too long'),
    {
      name: 'token: JSON body',
      url: '/connect/token',
      payload: `{"${M}":1}`,
      headers: { 'content-type': 'application/json' },
      error: 'invalid_request',
    },
    {
      name: 'token: broken JSON',
      url: '/connect/token',
      payload: `{"${M}":`,
      headers: { 'content-type': 'application/json' },
      error: 'invalid_request',
    },
    {
      name: 'token: XML body',
      url: '/connect/token',
      payload: `<${M}/>`,
      headers: { 'content-type': 'text/xml' },
      error: 'invalid_request',
    },
    { name: 'token: GET', method: 'GET', url: `/connect/token?${M}=1`, error: 'not_found' },
    // client_credentials.
    token({ ...CC, grant_type: 'client_credentials', scope: M }, 'invalid_scope', 'unknown scope'),
    token({ ...CC, grant_type: 'client_credentials', scope: `orders.read ${M}` }, 'invalid_scope', 'one unknown scope'),
    token({ ...CC, grant_type: 'client_credentials', scope: 'openid' }, 'invalid_scope', 'identity scope'),
    token({ ...CC, grant_type: 'client_credentials', resource: M }, 'invalid_target', 'unknown resource'),
    token({ client_id: 'public', grant_type: 'client_credentials' }, 'unauthorized_client', 'public client'),
    // refresh_token.
    token({ ...RT, grant_type: 'refresh_token' }, 'invalid_request', 'no refresh_token'),
    token({ ...RT, grant_type: 'refresh_token', refresh_token: M }, 'invalid_grant', 'unknown refresh_token'),
    token({ ...RT, grant_type: 'refresh_token', refresh_token: M, scope: M }, 'invalid_grant', 'unknown refresh_token with scope'),
    // password (RFC 6749 §4.3) and token exchange (RFC 8693).
    token({ ...RT, grant_type: 'password', password: M }, 'invalid_request', 'no username'),
    token({ ...RT, grant_type: 'password', username: M, password: M }, 'invalid_grant', 'wrong password'),
    token({ ...RT, grant_type: 'password', username: 'alice', password: M, scope: M }, 'invalid_scope', 'password grant scope'),
    token({ ...RT, grant_type: TX, subject_token_type: ACCESS_TOKEN }, 'invalid_request', 'no subject_token'),
    token({ ...RT, grant_type: TX, subject_token: M, subject_token_type: M }, 'invalid_request', 'subject_token_type'),
    token({ ...RT, grant_type: TX, subject_token: M, subject_token_type: ACCESS_TOKEN }, 'invalid_request', 'subject_token'),
    token(
      { ...RT, grant_type: TX, subject_token: M, subject_token_type: ACCESS_TOKEN, requested_token_type: M },
      'invalid_request',
      'requested_token_type',
    ),
    token(
      { ...RT, grant_type: TX, subject_token: M, subject_token_type: ACCESS_TOKEN, actor_token: M },
      'invalid_request',
      'actor_token without type',
    ),
    // The CIBA grant.
    token({ ...BANK, grant_type: CIBA }, 'invalid_request', 'no auth_req_id'),
    token({ ...BANK, grant_type: CIBA, auth_req_id: M }, 'invalid_grant', 'unknown auth_req_id'),
    token({ ...BANK, grant_type: CIBA, auth_req_id: pending }, 'authorization_pending', 'pending'),
    token({ ...BANK, grant_type: CIBA, auth_req_id: pending }, 'slow_down', 'too fast'),
    token({ ...CC, grant_type: CIBA, auth_req_id: pending }, 'unauthorized_client', 'other client'),
    // Introspection (RFC 7662 §2.3) and revocation (RFC 7009 §2.2.1).
    { name: 'introspect: no caller', url: '/connect/introspect', params: { token: M }, error: 'invalid_client' },
    {
      name: 'introspect: wrong secret',
      url: '/connect/introspect',
      params: { client_id: 'orders-api', client_secret: M, token: M },
      error: 'invalid_client',
    },
    { name: 'introspect: no token', url: '/connect/introspect', params: { ...API, token_type_hint: M }, error: 'invalid_request' },
    {
      name: 'introspect: repeated token',
      url: '/connect/introspect',
      payload: `${form(API)}&token=${M}&token=${M}`,
      error: 'invalid_request',
    },
    {
      name: 'introspect: token too long',
      url: '/connect/introspect',
      params: { ...API, token: M.repeat(10_000) },
      error: 'invalid_request',
    },
    { name: 'revocation: no client', url: '/connect/revocation', params: { token: M }, error: 'invalid_client' },
    { name: 'revocation: no token', url: '/connect/revocation', params: { ...CC, token_type_hint: M }, error: 'invalid_request' },
    {
      name: 'revocation: not a form',
      url: '/connect/revocation',
      payload: M,
      headers: { 'content-type': 'text/plain' },
      error: 'invalid_request',
    },
    // CIBA (Core §7.1, §13).
    ciba({ client_secret: M, ...ok }, 'invalid_client', 'wrong secret'),
    { name: 'ciba: not allowed', url: '/connect/ciba', params: { ...CC, ...ok }, error: 'unauthorized_client' },
    ciba({ login_hint: 'alice' }, 'invalid_request', 'no scope'),
    ciba({ ...ok, scope: M }, 'invalid_request', 'no openid'),
    ciba({ ...ok, scope: `openid ${M}` }, 'invalid_scope', 'unknown scope'),
    ciba({ scope: 'openid' }, 'invalid_request', 'no hint'),
    ciba({ ...ok, login_hint_token: M }, 'invalid_request', 'two hints'),
    ciba({ ...ok, login_hint: M }, 'unknown_user_id', 'unknown user'),
    ciba({ ...ok, binding_message: M.repeat(20) }, 'invalid_binding_message', 'long binding_message'),
    ciba({ ...ok, binding_message: `${M}\u202e` }, 'invalid_binding_message', 'bidi binding_message'),
    ciba({ ...ok, login_hint: 'bob' }, 'missing_user_code', 'no user_code'),
    ciba({ ...ok, login_hint: 'bob', user_code: M }, 'invalid_user_code', 'wrong user_code'),
    ciba({ ...ok, requested_expiry: M }, 'invalid_request', 'requested_expiry'),
    ciba({ ...ok, requested_expiry: '999999' }, 'invalid_request', 'requested_expiry too large'),
    ciba({ ...ok, resource: M }, 'invalid_target', 'unknown resource'),
    ciba({ scope: 'openid', id_token_hint: M }, 'invalid_request', 'id_token_hint'),
    ciba({ scope: 'openid', login_hint_token: M }, 'invalid_request', 'login_hint_token'),
    ciba(
      { scope: 'openid', login_hint_token: await signJwt(authz, authz.otherKey, { sub: M }) },
      'invalid_request',
      'login_hint_token foreign key',
    ),
    ciba({ request: M }, 'invalid_request', 'request object'),
    ciba(
      { request: await jwt({ scope: 'openid', login_hint: 'alice', binding_message: 7 }) },
      'invalid_request',
      'request object claim type',
    ),
    ciba({ request: await jwt({ scope: 'openid', login_hint: M, [M]: [M] }) }, 'unknown_user_id', 'request object unknown claim'),
    ciba({ request: await jwt({ iss: M, scope: 'openid', login_hint: 'alice' }) }, 'invalid_request', 'request object iss'),
    ciba({ request: await jwt({ scope: 'openid' }), login_hint: M }, 'invalid_request', 'parameter outside the request object'),
    // Discovery, JWKS and unknown routes.
    { name: 'discovery: POST', url: '/.well-known/openid-configuration', params: { [M]: M }, error: 'not_found' },
    { name: 'jwks: POST', url: '/.well-known/openid-configuration/jwks', params: { [M]: M }, error: 'not_found' },
    { name: 'jwks: control in query', method: 'GET', url: `/.well-known/openid-configuration/jwks?${M}=%01`, error: 'invalid_request' },
    { name: 'unknown route', method: 'GET', url: `/${M}?${M}=1`, error: 'not_found' },
    { name: 'unknown route under /connect', url: `/connect/${M}`, params: { [M]: M }, error: 'not_found' },
    { name: 'malformed path', method: 'GET', url: `/connect/${M}%zz`, error: 'invalid_request' },
  ]
}

describe('error_description', () => {
  it(
    'is a fixed sentence within the RFC 6749 §5.2 charset, at every endpoint, for every kind of bad input',
    { timeout: 120_000 },
    async () => {
      const all = await cases()
      const failures: string[] = []
      for (const c of all) {
        const method = c.method ?? 'POST'
        const payload = c.payload ?? (c.params ? form(c.params) : undefined)
        const res = await authz.app.inject({
          method,
          url: c.url,
          headers: { ...(method === 'POST' ? FORM : {}), ...c.headers },
          ...(payload !== undefined && method === 'POST' ? { payload } : {}),
        })
        try {
          expectOAuthError(res, c.name, M)
          expect(res.json().error, c.name).toBe(c.error)
        } catch (err) {
          failures.push(`${(err as Error).message.split('\n')[0]} (${res.statusCode} ${res.body.slice(0, 160)})`)
        }
      }
      expect(failures).toEqual([])
      expect(all.length).toBeGreaterThan(60)
    },
  )
})
