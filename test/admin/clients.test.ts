// /admin/clients: the seed file's client shape in and out, secrets write-only, lists paginated,
// writes judged against If-Match / If-None-Match (412), errors as RFC 9457 problems with the JSON
// path of each problem, every write an audit event naming what changed and never a secret.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../helpers/app.js'
import { postFormBasic } from '../helpers/http.js'
import { admin, adminAudit, adminToken, CC, createAdminTestApp, PROBLEM } from './admin-fixtures.js'

let t: TestApp
let call: ReturnType<typeof admin>
beforeAll(async () => {
  t = await createAdminTestApp()
  call = admin(t, await adminToken(t))
})
afterAll(async () => t.close())

/** What GET answers for a client given only these fields: the seed file's defaults. */
const DEFAULTS = {
  enabled: true,
  enableLocalLogin: true,
  requireDPoP: false,
  requireMfa: false,
  requireClientSecret: true,
  allowedGrantTypes: [],
  allowedScopes: [],
  redirectUris: [],
  postLogoutRedirectUris: [],
  requirePkce: true,
  allowOfflineAccess: false,
  accessTokenType: 'jwt',
  refreshTokenUsage: 'oneTimeOnly',
  refreshTokenExpiration: 'absolute',
  absoluteRefreshTokenLifetime: 2592000,
  slidingRefreshTokenLifetime: 1296000,
  identityProviderRestrictions: [],
  allowedTenants: [],
  allowedCorsOrigins: [],
  allowedSubjectTokenClients: [],
  allowedExchangeAudiences: [],
  backChannelLogoutSessionRequired: true,
  requireConsent: false,
  alwaysIncludeUserClaimsInIdToken: true,
  backchannelTokenDeliveryMode: 'poll',
  requirePushedAuthorization: false,
  requireRequestObject: false,
}

const clientCredentials = (id: string, secret: string) =>
  postFormBasic(t.app, '/connect/token', { grant_type: CC, scope: 'orders.read' }, id, secret)

describe('admin API: clients', () => {
  it('answers one client in the seed shape, without its secrets, with an ETag', async () => {
    const res = await call('GET', '/admin/clients/backend')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/)
    expect(res.json()).toEqual({ ...DEFAULTS, clientId: 'backend', allowedGrantTypes: [CC], allowedScopes: ['orders.read'] })
  })

  it('answers 404 for a client that does not exist', async () => {
    const res = await call('GET', '/admin/clients/nobody')
    expect(res.statusCode).toBe(404)
    expect(res.headers).toMatchObject(PROBLEM)
    expect(res.json()).toEqual({ type: 'about:blank', title: 'Not Found', status: 404, detail: 'no such client' })
  })

  it('lists clients by clientId, limit at a time, and filters by enabled', async () => {
    const first = await call('GET', '/admin/clients?limit=2')
    expect(first.statusCode).toBe(200)
    const page1 = first.json()
    expect(page1.items.map((c: { clientId: string }) => c.clientId)).toEqual(['auditor', 'automation'])
    expect(page1.items[0]).not.toHaveProperty('secrets')
    const second = (await call('GET', `/admin/clients?limit=2&cursor=${page1.nextCursor}`)).json()
    expect(second.items.map((c: { clientId: string }) => c.clientId)).toEqual(['backend'])
    expect(second).not.toHaveProperty('nextCursor')
    expect((await call('GET', '/admin/clients?enabled=false')).json()).toEqual({ items: [] })
  })

  it('refuses a bad query with the path of each problem', async () => {
    const res = await call('GET', '/admin/clients?limit=0&colour=red')
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      detail: 'the query is not valid',
      errors: [
        { path: 'limit', detail: 'Too small: expected number to be >=1' },
        { path: '(root)', detail: 'Unrecognized key: "colour"' },
      ],
    })
  })

  it('creates a client with PUT (201, Location, ETag) that then works, its secret stored only as a hash', async () => {
    const body = { allowedGrantTypes: [CC], allowedScopes: ['orders.read'], secrets: [{ value: 'reports-secret' }], clientName: 'Reports' }
    const res = await call('PUT', '/admin/clients/reports', { body })
    expect(res.statusCode).toBe(201)
    expect(res.headers.location).toBe('/admin/clients/reports')
    expect(res.json()).toEqual({
      ...DEFAULTS,
      clientId: 'reports',
      clientName: 'Reports',
      allowedGrantTypes: [CC],
      allowedScopes: ['orders.read'],
    })
    expect((await call('GET', '/admin/clients/reports')).headers.etag).toBe(res.headers.etag)
    expect((await clientCredentials('reports', 'reports-secret')).statusCode).toBe(200)
    const { rows } = await t.db.query<{ value_hash: string }>(`SELECT value_hash FROM client_secrets WHERE client_id = 'reports'`)
    expect(rows).toHaveLength(1)
    expect(rows[0]!.value_hash).not.toContain('reports-secret')
    expect(adminAudit(t).at(-1)).toMatchObject({
      event: 'admin.changed',
      outcome: 'success',
      client_id: 'automation',
      resource: 'clients/reports',
      action: 'create',
    })
    expect(JSON.stringify(adminAudit(t))).not.toContain('reports-secret')
  })

  it('replaces a client with PUT: what GET answered goes back, secrets omitted are kept, the same PUT twice changes nothing', async () => {
    const got = await call('GET', '/admin/clients/reports')
    const changed = { ...got.json(), enabled: false }
    const res = await call('PUT', '/admin/clients/reports', { body: changed, headers: { 'if-match': got.headers.etag as string } })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual(changed)
    expect(res.headers.etag).not.toBe(got.headers.etag)
    expect(adminAudit(t).at(-1)).toMatchObject({ resource: 'clients/reports', action: 'replace', changes: ['enabled'] })
    const audits = adminAudit(t).length
    const again = await call('PUT', '/admin/clients/reports', { body: changed })
    expect(again.statusCode).toBe(200)
    expect(again.headers.etag).toBe(res.headers.etag)
    expect(adminAudit(t)).toHaveLength(audits) // nothing changed, nothing recorded
    const { rows } = await t.db.query(`SELECT 1 FROM client_secrets WHERE client_id = 'reports'`)
    expect(rows).toHaveLength(1)
  })

  it('refuses a write whose If-Match names another version (412) and a create-only PUT of an existing client', async () => {
    const stale = await call('PUT', '/admin/clients/reports', { body: { allowedGrantTypes: [CC] }, headers: { 'if-match': '"stale"' } })
    expect(stale.statusCode).toBe(412)
    expect(stale.headers).toMatchObject(PROBLEM)
    expect(stale.json()).toEqual({
      type: 'about:blank',
      title: 'Precondition Failed',
      status: 412,
      detail: 'the resource is not in the version If-Match names: read it again',
    })
    const exists = await call('PUT', '/admin/clients/reports', { body: { allowedGrantTypes: [CC] }, headers: { 'if-none-match': '*' } })
    expect(exists.statusCode).toBe(412)
    const { rows } = await t.db.query<{ enabled: boolean }>(`SELECT enabled FROM clients WHERE client_id = 'reports'`)
    expect(rows).toEqual([{ enabled: false }])
    const missing = await call('PUT', '/admin/clients/ghost', { body: {}, headers: { 'if-match': '*' } })
    expect(missing.statusCode).toBe(412)
  })

  it('of two writes naming the same version, exactly one succeeds and the other is 412', async () => {
    for (let i = 0; i < 5; i++) {
      const got = await call('GET', '/admin/clients/backend')
      const results = await Promise.all(
        [1, 2].map((n) =>
          call('PUT', '/admin/clients/backend', {
            body: { ...got.json<Record<string, unknown>>(), clientName: `race ${i}.${n}` },
            headers: { 'if-match': got.headers.etag as string },
          }),
        ),
      )
      expect(results.map((r) => r.statusCode).sort()).toEqual([200, 412])
    }
  })

  it('refuses an invalid client with the JSON path of every problem, in the body, and stores nothing', async () => {
    const res = await call('PUT', '/admin/clients/broken', {
      body: { allowedGrantTypes: ['authorization_code'], accessTokenType: 'opaque', secrets: [{}], colour: 'red' },
    })
    expect(res.statusCode).toBe(400)
    expect(res.headers).toMatchObject(PROBLEM)
    expect(res.json()).toEqual({
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      detail: 'the request body is not a valid resource',
      errors: [
        { path: 'secrets[0]', detail: 'needs exactly one of "value" or "sha256"' },
        { path: 'accessTokenType', detail: 'Invalid option: expected one of "jwt"|"reference"' },
        { path: '(root)', detail: 'Unrecognized key: "colour"' },
        { path: 'redirectUris', detail: 'client broken: allowedGrantTypes has authorization_code, which needs at least one redirect URI' },
      ],
    })
    expect((await t.db.query(`SELECT 1 FROM clients WHERE client_id = 'broken'`)).rows).toEqual([])
  })

  it('refuses a scope that does not exist and a body naming another client, with their paths', async () => {
    const scope = await call('PUT', '/admin/clients/broken', { body: { allowedScopes: ['orders.read', 'nope'] } })
    expect(scope.statusCode).toBe(400)
    expect(scope.json().errors).toEqual([{ path: 'allowedScopes[1]', detail: '"nope" is neither an api scope nor an identity resource' }])
    const other = await call('PUT', '/admin/clients/broken', { body: { clientId: 'backend' } })
    expect(other.statusCode).toBe(400)
    expect(other.json().errors).toEqual([{ path: 'clientId', detail: 'must be the clientId of the path, or left out' }])
    const notJson = await call('PUT', '/admin/clients/broken', { body: '{', headers: { 'content-type': 'application/json' } })
    expect(notJson.statusCode).toBe(400)
    expect(notJson.json().detail).toBe('the request body is not valid JSON')
  })

  it('generates a secret, shows it once, and never answers it or its hash again', async () => {
    const before = await call('GET', '/admin/clients/backend')
    const res = await call('POST', '/admin/clients/backend/secrets', { body: { description: 'rotation 2026-11' } })
    expect(res.statusCode).toBe(201)
    const secret = res.json()
    expect(Object.keys(secret).sort()).toEqual(['description', 'value'])
    expect(secret.value).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(res.headers.etag).not.toBe(before.headers.etag)
    expect((await clientCredentials('backend', secret.value)).statusCode).toBe(200)
    expect((await clientCredentials('backend', 'backend-secret')).statusCode).toBe(200) // the old one until removed
    const after = await call('GET', '/admin/clients/backend')
    expect(after.body).not.toContain(secret.value)
    expect(after.json()).toEqual(before.json())
    // Listed by what is not secret about them: expiry and note.
    const listed = await call('GET', '/admin/clients/backend/secrets')
    expect(listed.statusCode).toBe(200)
    expect(listed.json()).toEqual({ items: [{}, { description: 'rotation 2026-11' }] })
    expect(listed.body).not.toContain(secret.value)
    expect((await call('GET', '/admin/clients/nobody/secrets')).statusCode).toBe(404)
    expect(adminAudit(t).at(-1)).toMatchObject({ resource: 'clients/backend', action: 'add-secret', changes: ['secrets'] })
    expect(t.logs.join('\n')).not.toContain(secret.value)
  })

  it('refuses a secret for a client that does not exist, and one expiring in the past', async () => {
    expect((await call('POST', '/admin/clients/nobody/secrets')).statusCode).toBe(404)
    const past = await call('POST', '/admin/clients/backend/secrets', { body: { expiration: '2000-01-01T00:00:00Z' } })
    expect(past.statusCode).toBe(400)
    expect(past.json().errors).toEqual([{ path: 'expiration', detail: 'must be in the future' }])
  })

  it('deletes a client (204), then it is 404 and refused at the token endpoint; a stale If-Match deletes nothing', async () => {
    const stale = await call('DELETE', '/admin/clients/reports', { headers: { 'if-match': '"stale"' } })
    expect(stale.statusCode).toBe(412)
    const res = await call('DELETE', '/admin/clients/reports')
    expect(res.statusCode).toBe(204)
    expect(res.body).toBe('')
    expect((await call('GET', '/admin/clients/reports')).statusCode).toBe(404)
    expect((await call('DELETE', '/admin/clients/reports')).statusCode).toBe(404)
    expect((await clientCredentials('reports', 'reports-secret')).statusCode).toBe(401)
    expect(adminAudit(t).at(-1)).toMatchObject({ resource: 'clients/reports', action: 'delete' })
  })

  it('takes and answers the CIBA delivery mode and notification endpoint, refusing push without an endpoint', async () => {
    const body = {
      allowedGrantTypes: ['urn:openid:params:grant-type:ciba'],
      allowedScopes: ['openid'],
      secrets: [{ value: 'bank-secret' }],
    }
    const pushed = { ...body, backchannelTokenDeliveryMode: 'push', backchannelClientNotificationEndpoint: 'https://bank.example/ciba' }
    const res = await call('PUT', '/admin/clients/push-bank', { body: pushed })
    expect(res.statusCode).toBe(201)
    expect((await call('GET', '/admin/clients/push-bank')).json()).toEqual({
      ...DEFAULTS,
      clientId: 'push-bank',
      allowedGrantTypes: ['urn:openid:params:grant-type:ciba'],
      allowedScopes: ['openid'],
      backchannelTokenDeliveryMode: 'push',
      backchannelClientNotificationEndpoint: 'https://bank.example/ciba',
    })
    const refused = await call('PUT', '/admin/clients/push-bank', { body: { ...body, backchannelTokenDeliveryMode: 'ping' } })
    expect(refused.statusCode).toBe(400)
    expect(refused.json().errors).toEqual([
      {
        path: 'backchannelClientNotificationEndpoint',
        detail: 'client push-bank: backchannelTokenDeliveryMode ping needs a backchannelClientNotificationEndpoint',
      },
    ])
  })
})
