// A change through the admin API of one replica reaches the other at once: two apps on one database
// (two replicas when DATABASE_URL names a PostgreSQL server), each caching clients and users'
// enabled flags for CLIENT_CACHE_TTL = 300 s on a clock that never moves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { postFormBasic } from '../helpers/http.js'
import { admin, adminToken, CC, createAdminTestApp } from './admin-fixtures.js'

let writer: TestApp
let replica: TestApp
beforeAll(async () => {
  writer = await createAdminTestApp({ CLIENT_CACHE_TTL: '300' })
  await writer.db.query(`UPDATE clients SET allowed_grant_types = '{client_credentials,password}' WHERE client_id = 'backend'`)
  replica = await createTestApp({ env: { CLIENT_CACHE_TTL: '300' }, testDb: writer.testDb })
})
afterAll(async () => {
  await replica.close()
  await writer.close()
})

async function withinASecond(fn: () => Promise<boolean>): Promise<boolean> {
  const start = performance.now()
  while (performance.now() - start < 1000) {
    if (await fn()) return true
    await new Promise((r) => setTimeout(r, 10))
  }
  return false
}

describe('admin API writes on every replica at once', () => {
  it('a user disabled through the admin API of one replica has their tokens refused by the other within a second', async () => {
    const issued = await postFormBasic(
      replica.app,
      '/connect/token',
      { grant_type: 'password', username: 'alice', password: 'alice-pw', scope: 'orders.read' },
      'backend',
      'backend-secret',
    )
    const token = issued.json().access_token as string
    const introspect = () => postFormBasic(replica.app, '/connect/introspect', { token }, 'orders-api', 'orders-secret')
    expect((await introspect()).json()).toMatchObject({ active: true, sub: 'alice-1' })
    expect((await admin(writer, await adminToken(writer))('POST', '/admin/users/alice/disable')).statusCode).toBe(200)
    expect(await withinASecond(async () => (await introspect()).body === '{"active":false}')).toBe(true)
  })

  it('a client disabled through the admin API of one replica is refused by the other within a second', async () => {
    const token = () => postFormBasic(replica.app, '/connect/token', { grant_type: CC, scope: 'orders.read' }, 'backend', 'backend-secret')
    expect((await token()).statusCode).toBe(200)
    const call = admin(writer, await adminToken(writer))
    const got = await call('GET', '/admin/clients/backend')
    const res = await call('PUT', '/admin/clients/backend', {
      body: { ...got.json<Record<string, unknown>>(), enabled: false },
      headers: { 'if-match': got.headers.etag as string },
    })
    expect(res.statusCode).toBe(200)
    expect(await withinASecond(async () => (await token()).statusCode === 401)).toBe(true)
  })
})
