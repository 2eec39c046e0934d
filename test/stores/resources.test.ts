import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPgResourceStore } from '../../src/stores/resources.postgres.js'
import type { ResourceStore } from '../../src/stores/resources.js'
import { secretHash } from '../../src/tokens/handles.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let authz: TestDb
let store: ResourceStore
beforeAll(async () => {
  authz = await createTestDb()
  store = createPgResourceStore(authz.db)
  await authz.db.exec(`
    INSERT INTO api_scopes (name, display_name, description) VALUES ('orders.read', 'Read orders', 'Lets you read');
    INSERT INTO api_scopes (name, enabled) VALUES ('orders.write', false);
    INSERT INTO api_resources (name, display_name) VALUES ('orders-api', 'Orders');
    INSERT INTO api_resources (name, enabled) VALUES ('empty-api', false);
    INSERT INTO api_resource_scopes VALUES ('orders-api', 'orders.write'), ('orders-api', 'orders.read');
    INSERT INTO identity_resources (name, claims) VALUES ('email', '{email,email_verified}');
    INSERT INTO identity_resources (name, display_name, description, claims) VALUES ('openid', 'Sign-in', 'Lets the app know who you are', '{sub}');
  `)
  await authz.db.query(
    `INSERT INTO api_resource_secrets (api_resource_name, value_hash, expires_at) VALUES ('orders-api', $1, '2030-01-01T00:00:00Z')`,
    [secretHash('api-secret')],
  )
})
afterAll(() => authz.close())

const ordersApi = {
  name: 'orders-api',
  displayName: 'Orders',
  enabled: true,
  scopes: ['orders.read', 'orders.write'],
  secrets: [{ valueHash: secretHash('api-secret'), expiresAt: Date.UTC(2030, 0, 1), description: undefined }],
}

describe('PgResourceStore', () => {
  it('loads the whole catalogue', async () => {
    const c = await store.loadCatalogue()
    expect([...c.apiScopes.values()]).toEqual([
      { name: 'orders.read', displayName: 'Read orders', description: 'Lets you read', enabled: true },
      { name: 'orders.write', displayName: undefined, description: undefined, enabled: false },
    ])
    expect([...c.apiResources.values()]).toEqual([
      { name: 'empty-api', displayName: undefined, enabled: false, scopes: [], secrets: [] },
      ordersApi,
    ])
    expect([...c.identityResources.values()]).toEqual([
      { name: 'email', displayName: undefined, description: undefined, claims: ['email', 'email_verified'], enabled: true },
      { name: 'openid', displayName: 'Sign-in', description: 'Lets the app know who you are', claims: ['sub'], enabled: true },
    ])
    expect(c.apiScopes.get('orders.read')?.displayName).toBe('Read orders')
  })

  it('finds one API resource by name', async () => {
    expect(await store.findApiResource('orders-api')).toEqual(ordersApi)
    expect(await store.findApiResource('nope')).toBeUndefined()
  })
})
