// /admin/api-scopes, /admin/api-resources, /admin/identity-resources: the seed file's shapes in
// and out, an API resource's secrets write-only, writes judged against If-Match (412), errors with
// the JSON path of each problem, and what the token endpoint then does.
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

const token = (scope: string) => postFormBasic(t.app, '/connect/token', { grant_type: CC, scope }, 'backend', 'backend-secret')

describe('admin API: api scopes', () => {
  it('lists, creates, replaces and deletes an API scope; the token endpoint follows', async () => {
    expect((await call('GET', '/admin/api-scopes')).json()).toEqual({ items: [{ name: 'orders.read', enabled: true }] })
    const created = await call('PUT', '/admin/api-scopes/orders.write', { body: { displayName: 'Write orders' } })
    expect(created.statusCode).toBe(201)
    expect(created.headers.location).toBe('/admin/api-scopes/orders.write')
    expect(created.json()).toEqual({ name: 'orders.write', displayName: 'Write orders', enabled: true })

    const disabled = await call('PUT', '/admin/api-scopes/orders.read', {
      body: { enabled: false },
      headers: { 'if-match': (await call('GET', '/admin/api-scopes/orders.read')).headers.etag as string },
    })
    expect(disabled.statusCode).toBe(200)
    expect(disabled.json()).toEqual({ name: 'orders.read', enabled: false })
    expect(adminAudit(t).at(-1)).toMatchObject({ resource: 'api-scopes/orders.read', action: 'replace', changes: ['enabled'] })
    expect((await token('orders.read')).json()).toEqual({
      error: 'invalid_scope',
      error_description: 'scope holds a value that is not an enabled scope',
    })
    await call('PUT', '/admin/api-scopes/orders.read', { body: {} })
    expect((await token('orders.read')).statusCode).toBe(200)

    expect((await call('DELETE', '/admin/api-scopes/orders.write')).statusCode).toBe(204)
    expect((await call('GET', '/admin/api-scopes/orders.write')).statusCode).toBe(404)
  })

  it('refuses an invalid API scope with its paths, a stale If-Match with 412, an unknown one with 404', async () => {
    const bad = await call('PUT', '/admin/api-scopes/bad', { body: { enabled: 'no', colour: 1 } })
    expect(bad.statusCode).toBe(400)
    expect(bad.headers).toMatchObject(PROBLEM)
    expect(bad.json().errors).toEqual([
      { path: 'enabled', detail: 'Invalid input: expected boolean, received string' },
      { path: '(root)', detail: 'Unrecognized key: "colour"' },
    ])
    for (const admin of ['authz:admin', 'authz:admin:read']) {
      const named = await call('PUT', `/admin/api-scopes/${admin}`, { body: {} })
      expect(named.statusCode).toBe(400)
      expect(named.json().errors).toEqual([
        { path: 'name', detail: '"authz:admin" and "authz:admin:read" are the admin API\'s built-in scopes, never an api scope' },
      ])
      expect((await call('GET', `/admin/api-scopes/${admin}`)).statusCode).toBe(404)
    }
    expect((await call('PUT', '/admin/api-scopes/orders.read', { body: {}, headers: { 'if-match': '"old"' } })).statusCode).toBe(412)
    const none = await call('DELETE', '/admin/api-scopes/none')
    expect(none.statusCode).toBe(404)
    expect(none.json()).toEqual({ type: 'about:blank', title: 'Not Found', status: 404, detail: 'no such api scope' })
  })
})

describe('admin API: api resources', () => {
  it('answers an API resource without its secrets; a PUT with secrets replaces them, and the ETag moves', async () => {
    const got = await call('GET', '/admin/api-resources/orders-api')
    expect(got.json()).toEqual({ name: 'orders-api', enabled: true, scopes: ['orders.read'] })
    const res = await call('PUT', '/admin/api-resources/orders-api', {
      body: { ...got.json<Record<string, unknown>>(), secrets: [{ value: 'orders-secret-2' }] },
      headers: { 'if-match': got.headers.etag as string },
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual(got.json())
    expect(res.headers.etag).not.toBe(got.headers.etag)
    expect(res.body).not.toContain('orders-secret-2')
    expect(adminAudit(t).at(-1)).toMatchObject({ resource: 'api-resources/orders-api', action: 'replace', changes: ['secrets'] })
    const jwt = (await token('orders.read')).json().access_token as string
    const introspect = (secret: string) => postFormBasic(t.app, '/connect/introspect', { token: jwt }, 'orders-api', secret)
    expect((await introspect('orders-secret-2')).json()).toMatchObject({ active: true })
    expect((await introspect('orders-secret')).statusCode).toBe(401)
  })

  it('refuses a scope that is not an API scope, with its path', async () => {
    const res = await call('PUT', '/admin/api-resources/billing-api', { body: { scopes: ['orders.read', 'billing.read'] } })
    expect(res.statusCode).toBe(400)
    expect(res.json().errors).toEqual([{ path: 'scopes[1]', detail: '"billing.read" is not an api scope' }])
    expect((await call('GET', '/admin/api-resources/billing-api')).statusCode).toBe(404)
  })
})

describe('admin API: identity resources', () => {
  it('creates a standard identity resource with its standard claims, lists and deletes it', async () => {
    const res = await call('PUT', '/admin/identity-resources/email', { body: {} })
    expect(res.statusCode).toBe(201)
    expect(res.json()).toEqual({ name: 'email', claims: ['email', 'email_verified'], enabled: true })
    const list = (await call('GET', '/admin/identity-resources?limit=1')).json()
    expect(list.items).toEqual([{ name: 'email', claims: ['email', 'email_verified'], enabled: true }])
    expect((await call('GET', `/admin/identity-resources?cursor=${list.nextCursor}`)).json()).toEqual({
      items: [{ name: 'openid', claims: ['sub'], enabled: true }],
    })
    expect((await call('DELETE', '/admin/identity-resources/email')).statusCode).toBe(204)
    expect(adminAudit(t).at(-1)).toMatchObject({ resource: 'identity-resources/email', action: 'delete' })
  })

  it('refuses a body naming another resource', async () => {
    const res = await call('PUT', '/admin/identity-resources/profile', { body: { name: 'email' } })
    expect(res.statusCode).toBe(400)
    expect(res.json().errors).toEqual([{ path: 'name', detail: 'must be the name of the path, or left out' }])
  })
})
