// A provider changed by anyone (the admin API here) is signed in through as it is now: the change
// NOTIFYs every replica (migration 0034), which forgets the upstream discovery documents it kept,
// so the next sign-in reads the provider's again instead of using one up to an hour old.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import { createTestApp, type TestApp } from '../../helpers/app.js'
import { createTestDb, type TestDb } from '../../helpers/db.js'
import { admin, ADMIN_SEED, adminToken } from '../../admin/admin-fixtures.js'

const AUTHORITY = 'https://sso.corp.example'
const PROVIDER = { scheme: 'corp', displayName: 'Corp SSO', type: 'oidc', authority: AUTHORITY, clientId: 'authz-rp' }

let t: TestApp
let testDb: TestDb
const discoveries: string[] = []
beforeAll(async () => {
  // Seeded before the app listens: a seed applied afterwards NOTIFYs too, and on PostgreSQL that
  // notification may arrive after the first sign-in below and drop what it cached.
  testDb = await createTestDb()
  await applySeed(testDb.db, { ...ADMIN_SEED, identityProviders: [PROVIDER] })
  t = await createTestApp({
    testDb,
    env: { ADMIN_PORT: '0' },
    upstream: {
      // The upstream's discovery document, counted; nothing else is asked of it here.
      fetch: async (url) => {
        discoveries.push(url)
        const doc = {
          issuer: AUTHORITY,
          authorization_endpoint: `${AUTHORITY}/authorize`,
          token_endpoint: `${AUTHORITY}/token`,
          jwks_uri: `${AUTHORITY}/jwks`,
        }
        return new Response(JSON.stringify(doc), { status: 200, headers: { 'content-type': 'application/json' } })
      },
    },
  })
})
afterAll(async () => {
  await t.close()
  await testDb.close()
})

const challenge = async () => {
  const res = await t.app.inject({ method: 'GET', url: '/federation/corp/challenge?return_to=%2Faccount' })
  expect(res.statusCode, res.body).toBe(303)
  return new URL(String(res.headers.location))
}

describe('a provider changed while the server runs', () => {
  it('is signed in through as changed: its discovery document is read again at once', async () => {
    expect((await challenge()).searchParams.get('client_id')).toBe('authz-rp')
    await challenge()
    expect(discoveries).toHaveLength(1) // kept for the metadata TTL

    const call = admin(t, await adminToken(t))
    const res = await call('PUT', '/admin/identity-providers/corp', { body: { ...PROVIDER, scope: 'openid email' } })
    expect(res.statusCode).toBe(200)
    const start = performance.now()
    while (discoveries.length < 2 && performance.now() - start < 1000) {
      await challenge()
      await new Promise((r) => setTimeout(r, 10))
    }
    expect(discoveries).toHaveLength(2)
    expect((await challenge()).searchParams.get('scope')).toBe('openid email')
  })
})
