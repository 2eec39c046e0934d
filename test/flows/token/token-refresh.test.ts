// The token issuer (ID tokens, refresh tokens) and the refresh_token grant (RFC 6749 §6, RFC 9700 §4.14.2).
import { createLocalJWKSet, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import { createScopeResolver } from '../../../src/grants/scopes.js'
import { atHash, createTokenIssuer } from '../../../src/tokens/issuer.js'
import { createPgGrantStore } from '../../../src/stores/grants.postgres.js'
import { createPgResourceStore } from '../../../src/stores/resources.postgres.js'
import { createPgClientStore } from '../../../src/stores/clients.postgres.js'
import { createPgUserStore } from '../../../src/stores/users.postgres.js'
import { basic, createTestApp, TEST_ISSUER, type TestApp } from '../../helpers/app.js'
import { postForm, postFormBasic } from '../../helpers/http.js'

let authz: TestApp
let issue: (clientId: string, scope: string) => Promise<Record<string, string>>
beforeAll(async () => {
  authz = await createTestApp()
  await applySeed(authz.db, {
    apiScopes: [{ name: 'orders.read' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read'], secrets: [{ value: 'orders-secret' }] }],
    identityResources: ['openid', 'profile', 'offline_access'],
    clients: [
      {
        clientId: 'app',
        secrets: [{ value: 'app-secret' }],
        allowedGrantTypes: ['refresh_token', 'urn:openid:params:grant-type:ciba'],
        allowedScopes: ['openid', 'profile', 'orders.read'],
        allowOfflineAccess: true,
        absoluteRefreshTokenLifetime: 1000,
      },
      {
        clientId: 'reuser',
        secrets: [{ value: 'reuser-secret' }],
        allowedGrantTypes: ['refresh_token'],
        allowedScopes: ['orders.read'],
        allowOfflineAccess: true,
        refreshTokenUsage: 'reUse',
      },
      {
        clientId: 'spa',
        requireClientSecret: false,
        allowedGrantTypes: ['refresh_token'],
        allowedScopes: ['orders.read'],
        allowOfflineAccess: true,
      },
    ],
    users: [{ subjectId: 'u-1', username: 'alice', claims: { name: 'Alice', email: 'alice@example.com' } }],
  })
  const resources = createPgResourceStore(authz.db)
  const users = createPgUserStore(authz.db)
  const clients = createPgClientStore(authz.db)
  const issuer = createTokenIssuer({
    config: authz.config,
    clock: authz.clock,
    keys: authz.app.authz.keys,
    grants: createPgGrantStore(authz.db),
    users,
    resources,
  })
  const scopes = createScopeResolver({ resources })
  issue = async (clientId, scope) => {
    const client = (await clients.findById(clientId))!
    const granted = await scopes.resolve(client, scope, { allowIdentity: true })
    const user = (await users.findBySubjectId('u-1'))!
    return (await issuer.issue({
      client,
      subjectId: 'u-1',
      granted,
      claims: { acr: '1' },
      refreshToken: true,
      idToken: { user, authTime: Math.floor(authz.clock.now() / 1000) - 5, nonce: 'n-1', amr: ['pwd'] },
    })) as unknown as Record<string, string>
  }
})
afterAll(() => authz.close())

const refresh = (params: Record<string, string>, headers: Record<string, string> = { authorization: basic('app', 'app-secret') }) =>
  postForm(authz.app, '/connect/token', { grant_type: 'refresh_token', ...params }, headers)

describe('token issuer', () => {
  it('issues an ID token (OIDC Core §2) with at_hash and the claims of the granted identity scopes', async () => {
    const res = await issue('app', 'openid profile orders.read offline_access')
    expect(res).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'openid profile orders.read offline_access',
      id_token: expect.any(String),
      refresh_token: expect.stringMatching(/^[\w-]{43}$/),
    })
    const jwks = createLocalJWKSet((await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration/jwks' })).json())
    const { payload, protectedHeader } = await jwtVerify(res.id_token!, jwks, {
      issuer: TEST_ISSUER,
      audience: 'app',
      currentDate: new Date(authz.clock.now()),
    })
    expect(protectedHeader).toMatchObject({ alg: 'RS256', typ: 'JWT' })
    const iat = Math.floor(authz.clock.now() / 1000)
    expect(payload).toEqual({
      iss: TEST_ISSUER,
      sub: 'u-1',
      aud: 'app',
      iat,
      exp: iat + 300,
      auth_time: iat - 5,
      nonce: 'n-1',
      amr: ['pwd'],
      at_hash: atHash(res.access_token!),
      name: 'Alice',
    })
    // Access tokens of a refresh-token family are recorded so that the family can be revoked.
    const { rows } = await authz.db.query<{ kind: string }>('SELECT kind FROM persisted_grants ORDER BY kind')
    expect(rows.map((r) => r.kind)).toEqual(['jwt_access_token', 'refresh_token'])
  })
})

describe('refresh_token grant', () => {
  it('rotates: the new token works, the old one replayed revokes the family', async () => {
    const first = await issue('app', 'openid orders.read offline_access')
    const r1 = await refresh({ refresh_token: first.refresh_token! })
    expect(r1.statusCode).toBe(200)
    const body = r1.json()
    expect(body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'openid orders.read offline_access',
      id_token: expect.any(String),
      refresh_token: expect.any(String),
    })
    expect(body.refresh_token).not.toBe(first.refresh_token)
    const replay = await refresh({ refresh_token: first.refresh_token! })
    expect(replay.statusCode).toBe(400)
    expect(replay.json()).toEqual({ error: 'invalid_grant', error_description: 'refresh token already used' })
    // The whole family is gone: the rotated token and the JWTs issued with it.
    expect((await refresh({ refresh_token: body.refresh_token })).json()).toEqual({
      error: 'invalid_grant',
      error_description: 'unknown refresh token',
    })
    const intro = await postFormBasic(authz.app, '/connect/introspect', { token: body.access_token }, 'orders-api', 'orders-secret')
    expect(intro.body).toBe('{"active":false}')
  })

  it('narrows scope but never widens it; other clients and unknown tokens get invalid_grant', async () => {
    const first = await issue('app', 'orders.read offline_access')
    const wider = await refresh({ refresh_token: first.refresh_token!, scope: 'orders.read profile' })
    expect(wider.json()).toEqual({ error: 'invalid_scope', error_description: 'scope exceeds the original grant' })
    const narrow = await refresh({ refresh_token: first.refresh_token!, scope: 'orders.read' })
    expect(narrow.json()).toMatchObject({ scope: 'orders.read' })
    // Rotated all the same, into a token that keeps the original scope (RFC 6749 §6; tests below).
    expect(narrow.json().refresh_token).toMatch(/^[\w-]{43}$/)
    expect(narrow.json().refresh_token).not.toBe(first.refresh_token)
    const other = await issue('app', 'orders.read offline_access')
    expect((await refresh({ refresh_token: other.refresh_token! }, { authorization: basic('reuser', 'reuser-secret') })).json()).toEqual({
      error: 'invalid_grant',
      error_description: 'unknown refresh token',
    })
    expect((await refresh({})).json()).toEqual({ error: 'invalid_request', error_description: 'refresh_token is missing or invalid' })
  })

  // RFC 6749 §6: "the refresh token scope MUST be identical to that of the refresh token included
  // by the client in the request". A client that asks for less on one refresh (least privilege)
  // must not lose the rest of its grant for good.
  it('a narrower scope narrows the access token only: the new refresh token keeps the original scope', async () => {
    const first = await issue('app', 'openid orders.read offline_access')
    const narrow = await refresh({ refresh_token: first.refresh_token!, scope: 'orders.read offline_access' })
    expect(narrow.statusCode).toBe(200)
    expect(narrow.json()).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'orders.read offline_access',
      refresh_token: expect.stringMatching(/^[\w-]{43}$/),
    })
    const seen = await postFormBasic(authz.app, '/connect/introspect', { token: narrow.json().refresh_token }, 'app', 'app-secret')
    expect(seen.json()).toMatchObject({ active: true, scope: 'openid orders.read offline_access' })
    const full = await refresh({ refresh_token: narrow.json().refresh_token })
    expect(full.statusCode).toBe(200)
    expect(full.json()).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'openid orders.read offline_access',
      id_token: expect.any(String),
      refresh_token: expect.stringMatching(/^[\w-]{43}$/),
    })
  })

  it('a scope without offline_access still rotates: the used-up refresh token is replaced, not the end of the grant', async () => {
    const first = await issue('app', 'orders.read offline_access')
    const narrow = await refresh({ refresh_token: first.refresh_token!, scope: 'orders.read' })
    expect(narrow.statusCode).toBe(200)
    expect(narrow.json()).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'orders.read',
      refresh_token: expect.stringMatching(/^[\w-]{43}$/),
    })
    const next = await refresh({ refresh_token: narrow.json().refresh_token })
    expect(next.statusCode).toBe(200)
    expect(next.json()).toMatchObject({ scope: 'orders.read offline_access', refresh_token: expect.stringMatching(/^[\w-]{43}$/) })
    // The one it replaced is used up: presented again, it revokes the family as any reuse does.
    expect((await refresh({ refresh_token: first.refresh_token! })).json()).toEqual({
      error: 'invalid_grant',
      error_description: 'refresh token already used',
    })
    expect((await refresh({ refresh_token: next.json().refresh_token })).json()).toEqual({
      error: 'invalid_grant',
      error_description: 'unknown refresh token',
    })
  })

  it('enforces the absolute lifetime', async () => {
    const first = await issue('app', 'orders.read offline_access')
    authz.clock.advance(1000)
    expect((await refresh({ refresh_token: first.refresh_token! })).json()).toEqual({
      error: 'invalid_grant',
      error_description: 'refresh token expired',
    })
  })

  it('reUse clients keep their token; public clients may refresh with client_id alone', async () => {
    const first = await issue('reuser', 'orders.read offline_access')
    const auth = { authorization: basic('reuser', 'reuser-secret') }
    expect((await refresh({ refresh_token: first.refresh_token! }, auth)).json().refresh_token).toBe(first.refresh_token)
    expect((await refresh({ refresh_token: first.refresh_token! }, auth)).statusCode).toBe(200)
    const spa = await issue('spa', 'orders.read offline_access')
    const res = await refresh({ refresh_token: spa.refresh_token!, client_id: 'spa' }, {})
    expect(res.statusCode).toBe(200)
  })
})

describe('refresh tokens at introspection and revocation', () => {
  const introspect = (token: string, authorization: string, hint?: string) =>
    postForm(authz.app, '/connect/introspect', { token, ...(hint ? { token_type_hint: hint } : {}) }, { authorization })

  it('shows a refresh token only to the client that owns it, never to an API', async () => {
    const res = await issue('app', 'orders.read offline_access')
    const own = await introspect(res.refresh_token!, basic('app', 'app-secret'), 'access_token')
    const iat = Math.floor(authz.clock.now() / 1000)
    expect(own.json()).toEqual({
      active: true,
      iss: TEST_ISSUER,
      sub: 'u-1',
      client_id: 'app',
      scope: 'orders.read offline_access',
      iat,
      exp: iat + 1000,
    })
    expect((await introspect(res.refresh_token!, basic('orders-api', 'orders-secret'), 'refresh_token')).body).toBe('{"active":false}')
    expect((await introspect(res.refresh_token!, basic('reuser', 'reuser-secret'))).body).toBe('{"active":false}')
  })

  it('revoking a refresh token revokes its family, JWT access tokens included', async () => {
    const res = await issue('app', 'orders.read offline_access')
    const other = await postFormBasic(authz.app, '/connect/revocation', { token: res.refresh_token! }, 'reuser', 'reuser-secret')
    expect(other.statusCode).toBe(200)
    expect((await introspect(res.refresh_token!, basic('app', 'app-secret'))).json().active).toBe(true)
    const rev = await postFormBasic(
      authz.app,
      '/connect/revocation',
      { token: res.refresh_token!, token_type_hint: 'refresh_token' },
      'app',
      'app-secret',
    )
    expect(rev.statusCode).toBe(200)
    expect((await introspect(res.refresh_token!, basic('app', 'app-secret'))).body).toBe('{"active":false}')
    // The JWT of that family reaches this replica's revocation list through NOTIFY.
    let body = ''
    for (let i = 0; i < 100 && body !== '{"active":false}'; i++) {
      body = (await introspect(res.access_token!, basic('orders-api', 'orders-secret'))).body
      if (body !== '{"active":false}') await new Promise((r) => setTimeout(r, 20))
    }
    expect(body).toBe('{"active":false}')
  })
})
