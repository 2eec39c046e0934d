// PUT /admin/seed: a whole seed document in one transaction, as SEED_FILE applies it: every problem
// with its JSON path and nothing written when one is found; counts and warnings when applied.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SeedAppliedView } from '../../src/admin/seed.js'
import type { TestApp } from '../helpers/app.js'
import { admin, adminAudit, adminToken, CC, createAdminTestApp, PROBLEM, readToken } from './admin-fixtures.js'

let t: TestApp
let call: ReturnType<typeof admin>
beforeAll(async () => {
  t = await createAdminTestApp()
  call = admin(t, await adminToken(t))
})
afterAll(async () => t.close())

describe('admin API: PUT /admin/seed', () => {
  it('applies a document in one transaction and answers its counts and warnings', async () => {
    const doc = {
      apiScopes: [{ name: 'stock.read' }],
      clients: [
        { clientId: 'stock', secrets: [{ value: 'stock-secret' }], allowedGrantTypes: [CC], allowedScopes: ['stock.read'] },
        { clientId: 'spa', requireClientSecret: false, requirePkce: false, allowedGrantTypes: [CC], allowedScopes: ['stock.read'] },
      ],
    }
    const res = await call('PUT', '/admin/seed', { body: doc })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({
      apiScopes: 1,
      apiResources: 0,
      identityResources: 0,
      clients: 2,
      users: 0,
      identityProviders: 0,
      warnings: [
        'clients[1].requirePkce: client "spa" is public (requireClientSecret false), so PKCE is required of it anyway (RFC 9700 §2.1.1); false has no effect',
      ],
    })
    expect(SeedAppliedView.safeParse(res.json()).error).toBeUndefined()
    expect((await call('GET', '/admin/clients/stock')).json()).toMatchObject({ clientId: 'stock', allowedScopes: ['stock.read'] })
    expect(adminAudit(t).at(-1)).toMatchObject({
      event: 'admin.changed',
      client_id: 'automation',
      resource: 'seed',
      action: 'apply-seed',
      changes: ['api-scopes/stock.read', 'clients/stock', 'clients/spa'],
    })
    expect(JSON.stringify(adminAudit(t))).not.toContain('stock-secret')
  })

  it('refuses a document with every problem and its path, and writes none of it', async () => {
    const res = await call('PUT', '/admin/seed', {
      body: { apiScopes: [{ name: 'ok.scope' }], clients: [{ clientId: 'x', allowedScopes: ['missing'] }], colour: 1 },
    })
    expect(res.statusCode).toBe(400)
    expect(res.headers).toMatchObject(PROBLEM)
    expect(res.json().errors).toEqual([
      { path: '(root)', detail: 'Unrecognized key: "colour"' },
      { path: 'clients[0].allowedScopes[0]', detail: '"missing" is neither an api scope nor an identity resource' },
    ])
    expect((await call('GET', '/admin/api-scopes/ok.scope')).statusCode).toBe(404)
  })

  it('needs authz:admin', async () => {
    const res = await admin(t, await readToken(t))('PUT', '/admin/seed', { body: {} })
    expect(res.statusCode).toBe(403)
  })
})
