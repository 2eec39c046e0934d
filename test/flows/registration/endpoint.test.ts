// RFC 7591 registration and RFC 7592 management as a client sees them: the answers, the stored
// client, the rotation of the registration access token, and deletion ending the client's tokens.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createPgClientStore } from '../../../src/stores/clients.postgres.js'
import { basic, type TestApp } from '../../helpers/app.js'
import { postForm } from '../../helpers/http.js'
import { bearer, createRegistrationTestApp, JSON_TYPE, pathOf, PUBLIC_CLIENT, register } from './harness.js'

let authz: TestApp
beforeEach(async () => {
  authz = await createRegistrationTestApp()
})
afterEach(async () => authz.close())

const B64URL_256 = /^[A-Za-z0-9_-]{43}$/

describe('POST /connect/register', () => {
  it('registers a public client: 201, no-store, the metadata as registered, a real client marked self-registered', async () => {
    const t0 = authz.clock.now()
    const res = await register(authz.app, PUBLIC_CLIENT)
    expect(res.statusCode).toBe(201)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers.pragma).toBe('no-cache')
    const body = res.json()
    expect(body).toEqual({
      client_id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      client_id_issued_at: Math.floor(t0 / 1000),
      registration_access_token: expect.stringMatching(B64URL_256),
      registration_client_uri: `https://authz.test/connect/register/${body.client_id}`,
      client_name: 'Assistant',
      redirect_uris: ['http://127.0.0.1:33418/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'web',
      scope: 'openid profile offline_access',
    })
    const client = await createPgClientStore(authz.db).findById(body.client_id)
    expect(client).toMatchObject({
      clientName: 'Assistant',
      selfRegistered: 'registration',
      requireClientSecret: false,
      requireConsent: true,
      requirePkce: true,
      allowOfflineAccess: true,
      allowedGrantTypes: ['authorization_code'],
      allowedScopes: ['openid', 'profile', 'offline_access'],
      redirectUris: ['http://127.0.0.1:33418/callback'],
      secrets: [],
    })
    // The registration access token is kept only as its hash.
    const { rows } = await authz.db.query<{ access_token_hash: string }>('SELECT access_token_hash FROM client_registrations')
    expect(rows).toHaveLength(1)
    expect(rows[0]!.access_token_hash).not.toContain(body.registration_access_token)
    expect(JSON.stringify(rows)).not.toContain(body.registration_access_token)
    expect(authz.logs.join('\n')).not.toContain(body.registration_access_token)
  })

  it('gives a confidential client a secret once, stored hashed, that authenticates at the token endpoint', async () => {
    const res = await register(authz.app, {
      redirect_uris: ['https://app.example/cb'],
      grant_types: ['authorization_code', 'client_credentials'],
      scope: 'orders.read',
    })
    expect(res.statusCode).toBe(201)
    const body = res.json()
    expect(body).toMatchObject({
      client_secret: expect.stringMatching(B64URL_256),
      client_secret_expires_at: 0,
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code', 'client_credentials'],
      scope: 'orders.read',
    })
    const { rows } = await authz.db.query('SELECT value_hash FROM client_secrets WHERE client_id = $1', [body.client_id])
    expect(JSON.stringify(rows)).not.toContain(body.client_secret)
    const token = await postForm(
      authz.app,
      '/connect/token',
      { grant_type: 'client_credentials' },
      { authorization: basic(body.client_id, body.client_secret) },
    )
    expect(token.statusCode).toBe(200)
    expect(token.json().scope).toBe('orders.read')
    // A read never shows the secret again.
    const read = await authz.app.inject({
      method: 'GET',
      url: pathOf(body.registration_client_uri),
      headers: bearer(body.registration_access_token),
    })
    expect(read.statusCode).toBe(200)
    expect(read.json().client_secret).toBeUndefined()
  })

  it('is advertised in discovery as registration_endpoint', async () => {
    const res = await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })
    expect(res.json().registration_endpoint).toBe('https://authz.test/connect/register')
  })
})

describe('RFC 7592 management', () => {
  it('reads, updates (the token rotates, the old one is refused) and deletes (204; the client and its tokens are gone)', async () => {
    const created = (await register(authz.app, { ...PUBLIC_CLIENT, grant_types: ['authorization_code'], scope: 'openid' })).json()
    const url = pathOf(created.registration_client_uri)
    const token1 = created.registration_access_token as string

    const read = await authz.app.inject({ method: 'GET', url, headers: bearer(token1) })
    expect(read.statusCode).toBe(200)
    expect(read.headers['cache-control']).toBe('no-store')
    expect(read.json()).toEqual({
      client_id: created.client_id,
      client_id_issued_at: created.client_id_issued_at,
      registration_client_uri: created.registration_client_uri,
      client_name: 'Assistant',
      redirect_uris: ['http://127.0.0.1:33418/callback'],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'web',
      scope: 'openid',
    })

    const update = await authz.app.inject({
      method: 'PUT',
      url,
      headers: { ...JSON_TYPE, ...bearer(token1) },
      payload: JSON.stringify({ ...PUBLIC_CLIENT, client_id: created.client_id, client_name: 'Assistant 2', scope: 'openid profile' }),
    })
    expect(update.statusCode).toBe(200)
    const updated = update.json()
    expect(updated).toMatchObject({ client_id: created.client_id, client_name: 'Assistant 2', scope: 'openid profile' })
    const token2 = updated.registration_access_token as string
    expect(token2).toMatch(B64URL_256)
    expect(token2).not.toBe(token1)
    expect((await createPgClientStore(authz.db).findById(created.client_id))?.clientName).toBe('Assistant 2')

    const old = await authz.app.inject({ method: 'GET', url, headers: bearer(token1) })
    expect(old.statusCode).toBe(401)
    expect(old.headers['www-authenticate']).toBe('Bearer realm="https://authz.test", error="invalid_token"')
    expect(old.json()).toEqual({ error: 'invalid_token', error_description: 'the registration access token is invalid' })

    // A token issued to the client before the deletion ...
    const cc = await register(authz.app, { grant_types: ['client_credentials'], scope: 'orders.read' })
    const ccBody = cc.json()
    const issued = await postForm(
      authz.app,
      '/connect/token',
      { grant_type: 'client_credentials' },
      { authorization: basic(ccBody.client_id, ccBody.client_secret) },
    )
    const accessToken = issued.json().access_token as string
    const del = await authz.app.inject({
      method: 'DELETE',
      url: pathOf(ccBody.registration_client_uri),
      headers: bearer(ccBody.registration_access_token),
    })
    expect(del.statusCode).toBe(204)
    expect(del.body).toBe('')
    expect(await createPgClientStore(authz.db).findById(ccBody.client_id)).toBeUndefined()
    // ... is nothing any more, and the client cannot authenticate nor be read.
    const introspected = await postForm(
      authz.app,
      '/connect/introspect',
      { token: accessToken },
      { authorization: basic('orders-api', 'api-secret') },
    )
    expect(introspected.json()).toEqual({ active: false })
    const again = await postForm(
      authz.app,
      '/connect/token',
      { grant_type: 'client_credentials' },
      { authorization: basic(ccBody.client_id, ccBody.client_secret) },
    )
    expect(again.statusCode).toBe(401)
    expect(again.json().error).toBe('invalid_client')
    const gone = await authz.app.inject({
      method: 'GET',
      url: pathOf(ccBody.registration_client_uri),
      headers: bearer(ccBody.registration_access_token),
    })
    expect(gone.statusCode).toBe(401)

    // The other registration is untouched.
    expect((await authz.app.inject({ method: 'GET', url, headers: bearer(token2) })).statusCode).toBe(200)
  })

  it('refuses a request without the registration access token: 401 with a Bearer challenge without error', async () => {
    const created = (await register(authz.app, PUBLIC_CLIENT)).json()
    const res = await authz.app.inject({ method: 'GET', url: pathOf(created.registration_client_uri) })
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toBe('Bearer realm="https://authz.test"')
    expect(res.json()).toEqual({ error: 'invalid_token', error_description: 'a registration access token is required' })
  })

  it("refuses another client's registration access token", async () => {
    const a = (await register(authz.app, PUBLIC_CLIENT)).json()
    const b = (await register(authz.app, PUBLIC_CLIENT)).json()
    const res = await authz.app.inject({
      method: 'DELETE',
      url: pathOf(a.registration_client_uri),
      headers: bearer(b.registration_access_token),
    })
    expect(res.statusCode).toBe(401)
    expect(res.json().error).toBe('invalid_token')
    expect(await createPgClientStore(authz.db).findById(a.client_id)).toBeDefined()
  })

  it('refuses an update that names another client_id or carries server members (invalid_request)', async () => {
    const c = (await register(authz.app, PUBLIC_CLIENT)).json()
    const put = (body: unknown) =>
      authz.app.inject({
        method: 'PUT',
        url: pathOf(c.registration_client_uri),
        headers: { ...JSON_TYPE, ...bearer(c.registration_access_token) },
        payload: JSON.stringify(body),
      })
    const other = await put({ ...PUBLIC_CLIENT, client_id: 'someone-else' })
    expect(other.statusCode).toBe(400)
    expect(other.json()).toEqual({ error: 'invalid_request', error_description: 'client_id must be the client_id of this registration' })
    const withToken = await put({ ...PUBLIC_CLIENT, client_id: c.client_id, registration_access_token: c.registration_access_token })
    expect(withToken.statusCode).toBe(400)
    expect(withToken.json().error).toBe('invalid_request')
    const confidential = await put({ ...PUBLIC_CLIENT, client_id: c.client_id, token_endpoint_auth_method: 'client_secret_basic' })
    expect(confidential.statusCode).toBe(400)
    expect(confidential.json()).toEqual({
      error: 'invalid_client_metadata',
      error_description: 'token_endpoint_auth_method cannot change between none and a client secret',
    })
    // Refused updates keep the token.
    expect(
      (await authz.app.inject({ method: 'GET', url: pathOf(c.registration_client_uri), headers: bearer(c.registration_access_token) }))
        .statusCode,
    ).toBe(200)
  })
})
