// RFC 8707 resource indicators, for API resources named by their URL (an MCP server's): at the
// authorization endpoint and at the token endpoint for the code, refresh, client credentials and
// device grants, `resource` selects one resource; the access token's `aud` is exactly its name and
// its scopes only that resource's; a refresh (or code) with another resource among those granted
// gets a token for that one (§2.2); an unregistered resource, or one with a fragment, is invalid_target.
// A pushed authorization request (RFC 9126) narrows as the authorization endpoint does. An API
// named by its URL introspects with that URL as its client id, form-encoded in Basic (RFC 6749 §2.3.1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../src/seed/apply.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { postForm, postFormBasic } from '../helpers/http.js'
import { authorizeUrl, codeFor, consent, located, pkcePair, redeem, session, WEB_CB } from '../flows/authorization-code/harness.js'
import { DEVICE, decide, start } from '../flows/device/harness.js'

const MCP = 'https://mcp.example.com/mcp'
const OTHER = 'https://other.example.com/api'

const SEED = {
  apiScopes: [{ name: 'tools.read' }, { name: 'other.read' }],
  apiResources: [
    { name: MCP, scopes: ['tools.read'], secrets: [{ value: 'mcp-secret' }] },
    { name: OTHER, scopes: ['other.read'] },
  ],
  identityResources: ['openid', 'profile', 'offline_access'],
  clients: [
    {
      clientId: 'web',
      secrets: [{ value: 'web-secret' }],
      allowedGrantTypes: ['authorization_code', 'refresh_token', 'client_credentials'],
      allowedScopes: ['openid', 'tools.read', 'other.read', 'offline_access'],
      allowOfflineAccess: true,
      redirectUris: [WEB_CB],
    },
    {
      clientId: 'tv',
      requireClientSecret: false,
      allowedGrantTypes: [DEVICE, 'refresh_token'],
      allowedScopes: ['openid', 'tools.read', 'other.read'],
    },
  ],
  users: [{ subjectId: 'u-alice', username: 'alice', password: 'alice-pw', claims: {} }],
}

let authz: TestApp
let cookie: string
beforeAll(async () => {
  authz = await createTestApp()
  await applySeed(authz.db, SEED)
  cookie = await session(authz)
})
afterAll(async () => authz.close())

const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>
const BOTH = { scope: 'openid tools.read other.read offline_access' }

describe('the authorization code grant', () => {
  it('binds the token to the resource the authorization request named, by its exact name', async () => {
    const { code, verifier } = await codeFor(authz, cookie, { ...BOTH, resource: MCP })
    const res = await redeem(authz, { code, code_verifier: verifier })
    expect(res.statusCode).toBe(200)
    const claims = claimsOf(res.json().access_token)
    expect(claims.aud).toBe(MCP)
    expect(claims.scope).toBe('openid tools.read offline_access')
  })

  it('narrows to the resource the token request names, and the refresh token keeps the others (§2.2)', async () => {
    const { code, verifier } = await codeFor(authz, cookie, BOTH)
    const res = await redeem(authz, { code, code_verifier: verifier, resource: OTHER })
    expect(res.statusCode).toBe(200)
    expect(claimsOf(res.json().access_token)).toMatchObject({ aud: OTHER, scope: 'openid other.read offline_access' })
    const refreshed = await postForm(authz.app, '/connect/token', {
      grant_type: 'refresh_token',
      refresh_token: res.json().refresh_token,
      resource: MCP,
      client_id: 'web',
      client_secret: 'web-secret',
    })
    expect(refreshed.statusCode).toBe(200)
    expect(claimsOf(refreshed.json().access_token)).toMatchObject({ aud: MCP, scope: 'openid tools.read offline_access' })
  })

  it('refuses at the token request a resource the code does not cover, and the code still works', async () => {
    const { code, verifier } = await codeFor(authz, cookie, { ...BOTH, resource: MCP })
    const refused = await redeem(authz, { code, code_verifier: verifier, resource: OTHER })
    expect(refused.statusCode).toBe(400)
    expect(refused.json()).toEqual({ error: 'invalid_target', error_description: 'resource is not part of the grant' })
    expect((await redeem(authz, { code, code_verifier: verifier })).statusCode).toBe(200)
  })

  it('refuses a refresh for a resource that was not granted', async () => {
    const { code, verifier } = await codeFor(authz, cookie, { ...BOTH, resource: MCP })
    const res = await redeem(authz, { code, code_verifier: verifier })
    const refreshed = await postForm(authz.app, '/connect/token', {
      grant_type: 'refresh_token',
      refresh_token: res.json().refresh_token,
      resource: OTHER,
      client_id: 'web',
      client_secret: 'web-secret',
    })
    expect(refreshed.json()).toEqual({ error: 'invalid_target', error_description: 'resource is not part of the original grant' })
  })

  for (const [what, resource, description] of [
    ['an unregistered resource', 'https://unknown.example.com/mcp', 'unknown resource'],
    ['a resource with a fragment', `${MCP}#frag`, 'resource must not contain a fragment'],
  ] as const) {
    it(`sends ${what} back to the client as invalid_target`, async () => {
      const res = await authz.app.inject({ method: 'GET', url: authorizeUrl({ ...BOTH, resource }), headers: { cookie } })
      expect(res.statusCode).toBe(303)
      const back = located(res)
      expect(back.searchParams.get('error')).toBe('invalid_target')
      expect(back.searchParams.get('error_description')).toBe(description)
    })
  }
})

describe('a pushed authorization request', () => {
  it('binds the token to the resource it named, as the authorization endpoint does', async () => {
    const { verifier, challenge } = pkcePair()
    const pushed = await postForm(authz.app, '/connect/par', {
      client_id: 'web',
      client_secret: 'web-secret',
      response_type: 'code',
      redirect_uri: WEB_CB,
      ...BOTH,
      resource: MCP,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    })
    expect(pushed.statusCode).toBe(201)
    const url = `/connect/authorize?${new URLSearchParams({ client_id: 'web', request_uri: pushed.json().request_uri })}`
    let res = await authz.app.inject({ method: 'GET', url, headers: { cookie } })
    if (res.statusCode === 200) res = await consent(authz, url, cookie, 'approve')
    const code = located(res).searchParams.get('code')!
    const token = await redeem(authz, { code, code_verifier: verifier })
    expect(token.statusCode).toBe(200)
    expect(claimsOf(token.json().access_token)).toMatchObject({ aud: MCP, scope: 'openid tools.read offline_access' })
  })

  it('refuses an unregistered resource at the push, as invalid_target', async () => {
    const pushed = await postForm(authz.app, '/connect/par', {
      client_id: 'web',
      client_secret: 'web-secret',
      response_type: 'code',
      redirect_uri: WEB_CB,
      ...BOTH,
      resource: 'https://unknown.example.com/mcp',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    })
    expect(pushed.statusCode).toBe(400)
    expect(pushed.json()).toEqual({ error: 'invalid_target', error_description: 'unknown resource' })
  })
})

describe('introspection by an API named by its URL', () => {
  const mcpToken = async () => {
    const res = await postForm(authz.app, '/connect/token', {
      grant_type: 'client_credentials',
      scope: 'tools.read',
      resource: MCP,
      client_id: 'web',
      client_secret: 'web-secret',
    })
    return res.json().access_token as string
  }

  it('authenticates with its URL form-encoded in Basic (RFC 6749 §2.3.1)', async () => {
    const res = await postFormBasic(authz.app, '/connect/introspect', { token: await mcpToken() }, MCP, 'mcp-secret')
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ active: true, aud: MCP, scope: 'tools.read', client_id: 'web' })
  })

  it('authenticates with client_secret_post', async () => {
    const res = await postForm(authz.app, '/connect/introspect', { token: await mcpToken(), client_id: MCP, client_secret: 'mcp-secret' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ active: true, aud: MCP, scope: 'tools.read', client_id: 'web' })
  })

  it('is invalid_client with its URL in Basic not form-encoded: the id ends at its first colon', async () => {
    const raw = `Basic ${Buffer.from(`${MCP}:mcp-secret`).toString('base64')}`
    const res = await postForm(authz.app, '/connect/introspect', { token: await mcpToken() }, { authorization: raw })
    expect(res.statusCode).toBe(401)
    expect(res.json().error).toBe('invalid_client')
  })
})

describe('the client credentials grant', () => {
  it('binds the token to the resource named by its URL, with only its scopes', async () => {
    const res = await postForm(authz.app, '/connect/token', {
      grant_type: 'client_credentials',
      scope: 'tools.read other.read',
      resource: MCP,
      client_id: 'web',
      client_secret: 'web-secret',
    })
    expect(res.statusCode).toBe(200)
    expect(claimsOf(res.json().access_token)).toMatchObject({ aud: MCP, scope: 'tools.read' })
  })

  it('refuses a resource with a fragment', async () => {
    const res = await postForm(authz.app, '/connect/token', {
      grant_type: 'client_credentials',
      resource: `${MCP}#x`,
      client_id: 'web',
      client_secret: 'web-secret',
    })
    expect(res.json()).toEqual({ error: 'invalid_target', error_description: 'resource must not contain a fragment' })
  })
})

describe('the device grant', () => {
  it('narrows the token to the resource the token request names, refusing one not approved first', async () => {
    const started = await start(authz, { client_id: 'tv', scope: 'openid tools.read' })
    await decide(authz, started.user_code, 'approve')
    const refused = await postForm(authz.app, '/connect/token', {
      grant_type: DEVICE,
      device_code: started.device_code,
      client_id: 'tv',
      resource: OTHER,
    })
    expect(refused.json()).toEqual({ error: 'invalid_target', error_description: 'resource is not part of the grant' })
    authz.clock.advance(10)
    const res = await postForm(authz.app, '/connect/token', {
      grant_type: DEVICE,
      device_code: started.device_code,
      client_id: 'tv',
      resource: MCP,
    })
    expect(res.statusCode).toBe(200)
    expect(claimsOf(res.json().access_token)).toMatchObject({ aud: MCP, scope: 'openid tools.read' })
  })
})
