// What may be registered (RFC 7591 §2, §3.2.2; RFC 8252 §7): every refusal with its exact error,
// never trimmed to fit, and what is accepted at the edges of the policy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../../helpers/app.js'
import { createRegistrationTestApp, PUBLIC_CLIENT, register } from './harness.js'

let authz: TestApp
beforeAll(async () => {
  authz = await createRegistrationTestApp({ RATE_LIMIT_REGISTRATION: '0' })
}, 120_000)
afterAll(async () => authz.close())

async function refused(body: unknown, error: string, description: string) {
  const before = (await authz.db.query('SELECT count(*)::int AS n FROM clients')).rows[0]
  const res = await register(authz.app, body)
  expect(res.statusCode).toBe(400)
  expect(res.headers['cache-control']).toBe('no-store')
  expect(res.json()).toEqual({ error, error_description: description })
  expect((await authz.db.query('SELECT count(*)::int AS n FROM clients')).rows[0]).toEqual(before)
}

describe('redirect URIs', () => {
  const NOT_A_REDIRECT = 'redirect_uris holds a URI that cannot be a redirect URI'
  it.each([
    ['a fragment', 'https://app.example/cb#x', NOT_A_REDIRECT],
    ['a relative URI', '/callback', NOT_A_REDIRECT],
    ['javascript:', 'javascript:alert(1)', NOT_A_REDIRECT],
    ['data:', 'data:text/html,hi', NOT_A_REDIRECT],
    ['http on a public host', 'http://app.example/cb', NOT_A_REDIRECT],
    [
      'http on localhost (not a loopback address)',
      'http://localhost:8080/cb',
      'redirect_uris holds an http URI that is not on a loopback address (127.0.0.1 or [::1])',
    ],
    [
      'a private-use scheme without application_type native',
      'com.example.app:/cb',
      'redirect_uris holds a private-use scheme, which needs application_type native',
    ],
  ])('refuses %s: invalid_redirect_uri', async (_what, uri, description) => {
    await refused({ ...PUBLIC_CLIENT, redirect_uris: ['https://ok.example/cb', uri] }, 'invalid_redirect_uri', description)
  })

  it('refuses the authorization_code grant without redirect URIs', async () => {
    await refused(
      { ...PUBLIC_CLIENT, redirect_uris: [] },
      'invalid_redirect_uri',
      'redirect_uris must hold at least one URI for the authorization_code grant type',
    )
  })

  it('accepts https, loopback addresses with any port without application_type, and a private-use scheme for a native app', async () => {
    const web = await register(authz.app, {
      ...PUBLIC_CLIENT,
      redirect_uris: ['https://app.example/cb', 'http://127.0.0.1/cb', 'http://[::1]:61000/cb'],
    })
    expect(web.statusCode).toBe(201)
    expect(web.json().application_type).toBe('web')
    const native = await register(authz.app, {
      ...PUBLIC_CLIENT,
      application_type: 'native',
      redirect_uris: ['com.example.app:/oauth2redirect'],
    })
    expect(native.statusCode).toBe(201)
    expect(native.json()).toMatchObject({ application_type: 'native', redirect_uris: ['com.example.app:/oauth2redirect'] })
  })
})

describe('metadata beyond the policy: invalid_client_metadata, never trimmed', () => {
  it.each([
    [
      'the password grant',
      { grant_types: ['authorization_code', 'password'] },
      'grant_types may hold only authorization_code, refresh_token and client_credentials',
    ],
    [
      'client_credentials for a public client',
      { grant_types: ['client_credentials'] },
      'grant_types client_credentials needs a confidential client',
    ],
    ['a scope outside REGISTRATION_ALLOWED_SCOPES', { scope: 'openid orders.write' }, 'scope holds a value that may not be registered'],
    [
      'offline_access without refresh_token',
      { grant_types: ['authorization_code'], scope: 'openid offline_access' },
      'scope offline_access needs the refresh_token grant type',
    ],
    [
      'client_secret_jwt (the secret would have to be kept readable)',
      { token_endpoint_auth_method: 'client_secret_jwt' },
      'token_endpoint_auth_method must be none, client_secret_basic, client_secret_post or private_key_jwt',
    ],
    [
      'private_key_jwt without keys',
      { token_endpoint_auth_method: 'private_key_jwt' },
      'token_endpoint_auth_method private_key_jwt needs jwks or jwks_uri',
    ],
    ['the implicit response type', { response_types: ['token'] }, 'response_types must be code, with the authorization_code grant type'],
    ['an unknown application_type', { application_type: 'desktop' }, 'application_type must be web or native'],
    [
      'a client_name with a control character',
      { client_name: 'A\u0007' },
      'client_name must be a non-empty string of at most 200 characters without control characters',
    ],
    ['a logo_uri over http', { logo_uri: 'http://app.example/logo.png' }, 'logo_uri must be an https URL without credentials or fragment'],
    [
      'redirect_uris that is not a list',
      { redirect_uris: 'https://app.example/cb' },
      'redirect_uris must be an array of at most 20 non-empty strings',
    ],
  ])('refuses %s', async (_what, change, description) => {
    await refused({ ...PUBLIC_CLIENT, ...change }, 'invalid_client_metadata', description)
  })

  it('refuses a body that is not a JSON object', async () => {
    await refused(['https://app.example/cb'], 'invalid_client_metadata', 'the request body must be a JSON object')
  })

  it('refuses a body that is not JSON at all as invalid_request, never a 500', async () => {
    const res = await authz.app.inject({
      method: 'POST',
      url: '/connect/register',
      headers: { 'content-type': 'application/json' },
      payload: '{"redirect_uris":',
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('invalid_request')
  })

  it('registers all allowed scopes when none are asked for (offline_access only with refresh tokens), and ignores unknown members', async () => {
    const { scope: _none, ...noScope } = PUBLIC_CLIENT
    const withRefresh = await register(authz.app, { ...noScope, frobnicate: true })
    expect(withRefresh.statusCode).toBe(201)
    expect(withRefresh.json().scope).toBe('openid profile offline_access orders.read')
    expect(withRefresh.json().frobnicate).toBeUndefined()
    const without = await register(authz.app, { ...noScope, grant_types: ['authorization_code'] })
    expect(without.json().scope).toBe('openid profile orders.read')
  })

  it('audits each refusal with its error code and never the request', async () => {
    await register(authz.app, { ...PUBLIC_CLIENT, redirect_uris: ['javascript:secret-marker'] })
    const lines = authz.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === 'registration.refused')
    expect(lines.at(-1)).toMatchObject({ log: 'audit', outcome: 'failure', reason: 'invalid_redirect_uri' })
    expect(authz.logs.join('\n')).not.toContain('secret-marker')
    const created = authz.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === 'registration.created')
    expect(created.length).toBeGreaterThan(0)
  })
})
