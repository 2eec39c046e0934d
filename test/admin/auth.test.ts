// Who may call the admin API (RFC 6750 §3): an access token of this server whose scope holds
// authz:admin (everything) or authz:admin:read (reads only); scopes that are built in, never
// granted by default, and an ordinary token's (revocable). The admin API is never on the public listener.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { basic, createTestApp, type TestApp } from '../helpers/app.js'
import { postForm, postFormBasic } from '../helpers/http.js'
import { dpopKey, proof, TOKEN_URL, type DPoPKey } from '../flows/dpop/proof.js'
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
    expect(res.json().detail).toBe('invalid_request: the Authorization header is not a Bearer or DPoP token')
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

  it("refuses an admin token whose audience is another API's (that API could replay it here)", async () => {
    const call = admin(t, await adminToken(t))
    const client = { secrets: [{ value: 'mixed-secret' }], allowedGrantTypes: [CC], allowedScopes: ['authz:admin', 'orders.read'] }
    expect((await call('PUT', '/admin/clients/mixed', { body: client })).statusCode).toBe(201)
    const token = await tokenFor(t, 'mixed', 'mixed-secret', 'authz:admin orders.read')
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>
    expect(claims).toMatchObject({ aud: 'orders-api', scope: 'authz:admin orders.read' })
    const res = await admin(t, token)('GET', '/admin/clients')
    expect(res.statusCode).toBe(401)
    expect(res.headers).toMatchObject({ ...PROBLEM, 'www-authenticate': `${REALM}, error="invalid_token"` })
    expect(res.json()).toEqual({
      type: 'about:blank',
      title: 'Unauthorized',
      status: 401,
      detail: 'invalid_token: the access token is not meant for this server (aud)',
    })
    expect(adminAudit(t).at(-1)).toMatchObject({ event: 'admin.refused', client_id: 'mixed', reason: 'invalid_token' })
    // The same client's admin token asked alone names this server and is taken.
    const alone = await tokenFor(t, 'mixed', 'mixed-secret', 'authz:admin')
    expect((await admin(t, alone)('GET', '/admin/clients')).statusCode).toBe(200)
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

// RFC 9449 §7: a DPoP-bound admin token is used with its key, as at userinfo, or not at all: a thief
// of the token alone (a log line, a proxy) cannot call the admin API with it.
describe('admin API: DPoP-bound tokens', () => {
  const URL = 'http://localhost/admin/clients'
  const ALGS = 'ES256 ES384 ES512 PS256 PS384 PS512 RS256 RS384 RS512 EdDSA Ed25519'
  const challenge = (error: string) => `DPoP error="${error}", algs="${ALGS}"`
  let key: DPoPKey

  beforeAll(async () => {
    key = await dpopKey()
  })

  async function boundToken(scope = 'authz:admin'): Promise<string> {
    const res = await postForm(
      t.app,
      '/connect/token',
      { grant_type: CC, scope },
      { authorization: basic('automation', 'automation-secret'), dpop: await proof(t, key, { htu: TOKEN_URL }) },
    )
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().token_type).toBe('DPoP')
    return res.json().access_token as string
  }
  const call = (headers: Record<string, string>, method: 'GET' | 'PUT' = 'GET', url = '/admin/clients') =>
    t.app.authz.admin!.app.inject({ method, url, headers })

  it('refuses a bound token presented as a Bearer token: 401 invalid_token', async () => {
    const token = await boundToken()
    const res = await call({ authorization: `Bearer ${token}` })
    expect(res.statusCode).toBe(401)
    expect(res.headers).toMatchObject({ ...PROBLEM, 'www-authenticate': challenge('invalid_token') })
    expect(res.json()).toEqual({
      type: 'about:blank',
      title: 'Unauthorized',
      status: 401,
      detail: 'invalid_token: the access token is bound to a DPoP key: present it with the DPoP scheme',
    })
    expect(adminAudit(t).at(-1)).toMatchObject({ event: 'admin.refused', outcome: 'failure', reason: 'invalid_token' })
  })

  it('takes a bound token with the DPoP scheme and a proof of its key naming it', async () => {
    const token = await boundToken()
    const res = await call({ authorization: `DPoP ${token}`, dpop: await proof(t, key, { htm: 'GET', htu: URL, accessToken: token }) })
    expect(res.statusCode, res.body).toBe(200)
    // Behind a proxy that ends TLS the client addresses https: the host and path are what must match.
    const https = await call({
      host: 'admin.example',
      authorization: `DPoP ${token}`,
      dpop: await proof(t, key, { htm: 'GET', htu: 'https://admin.example/admin/clients', accessToken: token }),
    })
    expect(https.statusCode, https.body).toBe(200)
  })

  it('refuses the DPoP scheme without a proof, with a proof of another key, URL, method or token', async () => {
    const token = await boundToken()
    const other = await dpopKey()
    const cases: [Record<string, string>, string, string][] = [
      [{}, 'invalid_dpop_proof', 'invalid_dpop_proof: a DPoP proof is required with the DPoP scheme'],
      [
        { dpop: await proof(t, other, { htm: 'GET', htu: URL, accessToken: token }) },
        'invalid_dpop_proof',
        'invalid_dpop_proof: the DPoP proof is not of the key the access token is bound to',
      ],
      [
        { dpop: await proof(t, key, { htm: 'GET', htu: 'http://localhost/admin/users', accessToken: token }) },
        'invalid_dpop_proof',
        'invalid_dpop_proof: the DPoP proof htu does not match the request URL',
      ],
      [
        { dpop: await proof(t, key, { htm: 'POST', htu: URL, accessToken: token }) },
        'invalid_dpop_proof',
        'invalid_dpop_proof: the DPoP proof htm does not match the request method',
      ],
      [
        { dpop: await proof(t, key, { htm: 'GET', htu: URL, accessToken: 'another-token' }) },
        'invalid_dpop_proof',
        'invalid_dpop_proof: the DPoP proof ath does not match the access token',
      ],
    ]
    for (const [headers, error, detail] of cases) {
      const res = await call({ authorization: `DPoP ${token}`, ...headers })
      expect(res.statusCode, detail).toBe(401)
      expect(res.headers['www-authenticate'], detail).toBe(challenge(error))
      expect(res.json().detail).toBe(detail)
    }
  })

  it('refuses a proof used twice', async () => {
    const token = await boundToken()
    const dpop = await proof(t, key, { htm: 'GET', htu: URL, accessToken: token })
    expect((await call({ authorization: `DPoP ${token}`, dpop })).statusCode).toBe(200)
    const again = await call({ authorization: `DPoP ${token}`, dpop })
    expect(again.statusCode).toBe(401)
    expect(again.json().detail).toBe('invalid_dpop_proof: the DPoP proof was used before')
  })

  it('refuses an unbound token sent with the DPoP scheme', async () => {
    const token = await adminToken(t)
    const res = await call({ authorization: `DPoP ${token}`, dpop: await proof(t, key, { htm: 'GET', htu: URL, accessToken: token }) })
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toBe(challenge('invalid_token'))
    expect(res.json().detail).toBe('invalid_token: the access token is not DPoP-bound: present it as a Bearer token')
  })

  it('answers a bound read token used to write 403 insufficient_scope with the DPoP challenge', async () => {
    const res0 = await postForm(
      t.app,
      '/connect/token',
      { grant_type: CC, scope: 'authz:admin:read' },
      { authorization: basic('auditor', 'auditor-secret'), dpop: await proof(t, key, { htu: TOKEN_URL }) },
    )
    const token = res0.json().access_token as string
    const url = 'http://localhost/admin/clients/backend'
    const res = await call(
      { authorization: `DPoP ${token}`, dpop: await proof(t, key, { htm: 'PUT', htu: url, accessToken: token }) },
      'PUT',
      '/admin/clients/backend',
    )
    expect(res.statusCode).toBe(403)
    expect(res.headers['www-authenticate']).toBe(challenge('insufficient_scope'))
    expect(res.json().detail).toBe('insufficient_scope: this request needs the scope authz:admin')
  })
})
