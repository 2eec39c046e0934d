import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeScopes } from '../../src/interaction/scope-descriptions.js'
import { applySeed } from '../../src/seed/apply.js'
import { createPgResourceStore } from '../../src/stores/resources.postgres.js'
import type { ResourceCatalogue } from '../../src/stores/resources.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let authz: TestDb
let catalogue: ResourceCatalogue
beforeAll(async () => {
  authz = await createTestDb()
  await applySeed(authz.db, {
    apiScopes: [
      { name: 'orders.read', displayName: 'Read your orders', description: 'See the orders you placed and their status' },
      { name: 'orders.write' },
      { name: 'orders.cancel', displayName: '   ', description: '' },
    ],
    identityResources: [
      { name: 'openid', displayName: 'Your user identifier' },
      { name: 'profile', displayName: 'Your name', description: 'Your full name only', claims: ['name'] },
      'email',
      { name: 'loyalty', displayName: 'Your loyalty number', claims: ['loyalty_no'] },
    ],
  })
  catalogue = await createPgResourceStore(authz.db).loadCatalogue()
})
afterAll(() => authz.close())

describe('describeScopes', () => {
  it('gives the seeded displayName and description of API scopes and identity resources', () => {
    expect(describeScopes(catalogue, ['profile', 'orders.read', 'loyalty'])).toEqual([
      { name: 'profile', displayName: 'Your name', description: 'Your full name only' },
      { name: 'orders.read', displayName: 'Read your orders', description: 'See the orders you placed and their status' },
      { name: 'loyalty', displayName: 'Your loyalty number', description: undefined },
    ])
  })

  it("leaves out what the seed does not say, field by field (the page words it in the reader's language)", () => {
    expect(describeScopes(catalogue, ['openid', 'email', 'offline_access'])).toEqual([
      // Seeded displayName, no description.
      { name: 'openid', displayName: 'Your user identifier', description: undefined },
      // Seeded without texts (a plain name in the seed file).
      { name: 'email', displayName: undefined, description: undefined },
      // Not in the catalogue at all.
      { name: 'offline_access', displayName: undefined, description: undefined },
    ])
  })

  it('ignores blank seeded texts', () => {
    expect(describeScopes(catalogue, ['orders.write', 'orders.cancel', 'unknown.scope', 'constructor'])).toEqual([
      { name: 'orders.write', displayName: undefined, description: undefined },
      { name: 'orders.cancel', displayName: undefined, description: undefined },
      { name: 'unknown.scope', displayName: undefined, description: undefined },
      { name: 'constructor', displayName: undefined, description: undefined },
    ])
  })

  it('keeps the order given, without repeats or empty names', () => {
    expect(describeScopes(catalogue, ['orders.read', '', 'openid', 'orders.read']).map((d) => d.name)).toEqual(['orders.read', 'openid'])
    expect(describeScopes(catalogue, [])).toEqual([])
  })
})
