// Who may call the admin API (RFC 6750 §3): an access token of this server whose scope holds
// authz:admin (everything) or authz:admin:read (reads only); scopes that are built in, never
// granted by default, and an ordinary token's (revocable). The admin API is never on the public listener.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { basic, createTestApp, type TestApp } from '../helpers/app.js'
import { postForm, postFormBasic } from '../helpers/http.js'
import { admin, adminAudit, adminToken, CC, createAdminTestApp, PROBLEM, readToken, tokenFor } from './admin-fixtures.js'

let t: TestApp
beforeAll(async () => {
  t = await createAdminTestApp()
})
afterAll(async () => t.close())

const REALM = 'Bearer realm="https://authz.test"'

describe('admin API: authentication and scopes', () => {
  it('answers 401 with a bare Bearer challenge when no token is presented', async () => {
    const res = await admin(t, undefined)('GET', '/admin/clients')
    expect(res.statusCode).toBe(401)
    expect(res.headers).toMatchObject({ ...PROBLEM, 'www-authenticate': REALM })
    expect(res.json()).toEqual({
      type: 'about:blank',
      title: 'Unauthorized',
      status: 401,
      detail: 'an access token is required (Authorization: Bearer)',
    })
  })

  it('answers 400 invalid_request to credentials that are not a Bearer token', async () => {
    const res = await t.app.authz.admin!.app.inject({
      method: 'GET',
      url: '/admin/clients',
      headers: { authorization: basic('automation', 'automation-secret') },
    })
    expect(res.statusCode).toBe(400)
    expect(res.headers['www-authenticate']).toBe(`${REALM}, error="invalid_request"`)
    expect(res.json().detail).toBe('invalid_request: the Authorization header is not a Bearer token')
  })

  it('answers 401 invalid_token to a token that is not ours, and audits it', async () => {
    const res = await admin(t, 'not-a-token')('GET', '/admin/clients')
    expect(res.statusCode).toBe(401)
    expect(res.headers).toMatchObject({ ...PROBLEM, 'www-authenticate': `${REALM}, error="invalid_token"` })
    expect(res.json()).toEqual({
      type: 'about:blank',
      title: 'Unauthorized',
      status: 401,
      detail: 'invalid_token: the access token is not valid',
    })
    expect(adminAudit(t).at(-1)).toMatchObject({ event: 'admin.refused', outcome: 'failure', reason: 'invalid_token' })
  })

  it('answers 403 insufficient_scope to a token of ours without an admin scope', async () => {
    const token = await tokenFor(t, 'backend', 'backend-secret', 'orders.read')
    const res = await admin(t, token)('GET', '/admin/clients')
    expect(res.statusCode).toBe(403)
    expect(res.headers['www-authenticate']).toBe(`${REALM}, error="insufficient_scope", scope="authz:admin:read"`)
    expect(res.json()).toEqual({
      type: 'about:blank',
      title: 'Forbidden',
      status: 403,
      detail: 'insufficient_scope: this request needs the scope authz:admin:read or authz:admin',
    })
    expect(adminAudit(t).at(-1)).toMatchObject({ event: 'admin.refused', client_id: 'backend', reason: 'insufficient_scope' })
  })

  it('lets authz:admin:read read but not write', async () => {
    const call = admin(t, await readToken(t))
    expect((await call('GET', '/admin/clients/backend')).statusCode).toBe(200)
    const res = await call('PUT', '/admin/clients/backend', { body: { allowedScopes: [] } })
    expect(res.statusCode).toBe(403)
    expect(res.headers['www-authenticate']).toBe(`${REALM}, error="insufficient_scope", scope="authz:admin"`)
    expect(res.json().detail).toBe('insufficient_scope: this request needs the scope authz:admin')
    const { rows } = await t.db.query<{ allowed_scopes: string[] }>(`SELECT allowed_scopes FROM clients WHERE client_id = 'backend'`)
    expect(rows).toEqual([{ allowed_scopes: ['orders.read'] }])
  })

  it('never grants an admin scope by default, nor to a client that does not list it', async () => {
    const omitted = await postFormBasic(t.app, '/connect/token', { grant_type: CC }, 'automation', 'automation-secret')
    expect(omitted.statusCode).toBe(400)
    expect(omitted.json()).toEqual({ error: 'invalid_scope', error_description: 'no scope requested and none allowed by default' })
    const other = await postFormBasic(t.app, '/connect/token', { grant_type: CC, scope: 'authz:admin' }, 'backend', 'backend-secret')
    expect(other.statusCode).toBe(400)
    expect(other.json()).toEqual({ error: 'invalid_scope', error_description: 'scope holds a value this client may not request' })
  })

  it('takes an ordinary token of this server, for itself as audience, and refuses it once revoked', async () => {
    const token = await adminToken(t)
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>
    expect(claims).toMatchObject({ iss: 'https://authz.test', aud: 'https://authz.test', client_id: 'automation', scope: 'authz:admin' })
    expect((await admin(t, token)('GET', '/admin/users')).statusCode).toBe(200)
    const revoked = await postForm(t.app, '/connect/revocation', { token }, { authorization: basic('automation', 'automation-secret') })
    expect(revoked.statusCode).toBe(200)
    expect((await admin(t, token)('GET', '/admin/users')).statusCode).toBe(401)
  })

  it('is not served by the public listener', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/admin/clients', headers: { authorization: `Bearer ${await adminToken(t)}` } })
    expect(res.statusCode).toBe(404)
  })

  it('answers 404 as a problem for a path it does not have', async () => {
    const res = await admin(t, await adminToken(t))('GET', '/admin/nothing')
    expect(res.statusCode).toBe(404)
    expect(res.headers).toMatchObject(PROBLEM)
    expect(res.json()).toEqual({
      type: 'about:blank',
      title: 'Not Found',
      status: 404,
      detail: 'no admin resource at this path for this method',
    })
  })

  it('has no admin listener when ADMIN_PORT is unset', async () => {
    const plain = await createTestApp()
    try {
      expect(plain.app.authz.admin).toBeUndefined()
      expect(await plain.app.authz.listenAdmin()).toBeUndefined()
    } finally {
      await plain.close()
    }
  })
})
