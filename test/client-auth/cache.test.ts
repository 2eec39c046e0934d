// Remembered secret matches (src/client-auth/authenticators.ts createSecretVerifier) with CLIENT_CACHE_TTL
// on: an expired secret fails at its expiry, a removed one once the client cache drops (at the
// removal's NOTIFY, migration 0031), exactly as without the remembered match; a wrong secret is
// never accepted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../src/seed/apply.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { postFormBasic } from '../helpers/http.js'

const TTL = 60
let authz: TestApp
let expiresAt: number

beforeAll(async () => {
  authz = await createTestApp({ env: { CLIENT_CACHE_TTL: String(TTL) } })
  expiresAt = Math.ceil(authz.clock.now() / 1000) * 1000 + 30_000
  const expiration = new Date(expiresAt).toISOString()
  await applySeed(authz.db, {
    apiScopes: [{ name: 'orders.read' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read'], secrets: [{ value: 'api-soon', expiration }, { value: 'api-kept' }] }],
    identityResources: [],
    clients: [
      {
        clientId: 'svc',
        secrets: [{ value: 'svc-soon', expiration }, { value: 'svc-kept' }],
        allowedGrantTypes: ['client_credentials'],
        allowedScopes: ['orders.read'],
      },
    ],
  })
})
afterAll(() => authz.close())

const token = (secret: string) => postFormBasic(authz.app, '/connect/token', { grant_type: 'client_credentials' }, 'svc', secret)
const introspect = (id: string, secret: string) => postFormBasic(authz.app, '/connect/introspect', { token: 'x' }, id, secret)

const INVALID_CLIENT = { error: 'invalid_client', error_description: 'client authentication failed' }
const INVALID_CALLER = { error: 'invalid_client', error_description: 'caller authentication failed' }

describe('remembered secret matches', () => {
  it('stop at the secret expiry and after a removal once the client cache reloads', async () => {
    for (let i = 0; i < 2; i++) {
      // Twice: the second answer comes from the remembered match.
      for (const s of ['svc-soon', 'svc-kept']) expect((await token(s)).statusCode).toBe(200)
      for (const [id, s] of [
        ['orders-api', 'api-soon'],
        ['orders-api', 'api-kept'],
        ['svc', 'svc-kept'],
      ] as const) {
        const res = await introspect(id, s)
        expect([res.statusCode, res.json()]).toEqual([200, { active: false }])
      }
      const wrong = await token('svc-wrong')
      expect([wrong.statusCode, wrong.json()]).toEqual([401, INVALID_CLIENT])
      expect((await introspect('orders-api', 'svc-kept')).json()).toEqual(INVALID_CALLER)
    }

    // Expired secrets fail at their expiry, although the cached records still list them.
    authz.clock.set(expiresAt)
    expect((await token('svc-soon')).json()).toEqual(INVALID_CLIENT)
    expect((await introspect('orders-api', 'api-soon')).json()).toEqual(INVALID_CALLER)
    expect((await token('svc-kept')).statusCode).toBe(200)

    // Removed secrets stop once the cache drops: at the removal's notification (within a second of
    // real time, the clock still), never to work again.
    await authz.db.query(`DELETE FROM client_secrets WHERE client_id = 'svc'`)
    await authz.db.query(`DELETE FROM api_resource_secrets WHERE api_resource_name = 'orders-api'`)
    let dropped = false
    for (let i = 0; i < 100 && !dropped; i++) {
      dropped = (await token('svc-kept')).statusCode === 401 && (await introspect('orders-api', 'api-kept')).statusCode === 401
      if (!dropped) await new Promise((r) => setTimeout(r, 10))
    }
    expect(dropped).toBe(true)
    const removed = await token('svc-kept')
    expect([removed.statusCode, removed.headers['www-authenticate'], removed.json()]).toEqual([
      401,
      'Basic realm="https://authz.test"',
      INVALID_CLIENT,
    ])
    expect((await introspect('orders-api', 'api-kept')).json()).toEqual(INVALID_CALLER)
    expect((await introspect('svc', 'svc-kept')).json()).toEqual(INVALID_CALLER)
  })
})
