// Every replica sees a change at once: two apps on one database (two replicas when DATABASE_URL
// names a PostgreSQL server), each keeping clients, resources and users' enabled flags in memory
// for CLIENT_CACHE_TTL = 300 s. A change committed by anyone (the CLI's store, a seed file, SQL
// by hand) reaches the other replica through migration 0031's NOTIFY, well within a second; the
// manual clocks never move, so no TTL can expire meanwhile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../src/seed/apply.js'
import { createPgClientStore } from '../../src/stores/clients.postgres.js'
import { createPgUserStore } from '../../src/stores/users.postgres.js'
import { basic, createTestApp, type TestApp } from '../helpers/app.js'
import { postForm, postFormBasic } from '../helpers/http.js'

const CACHED = { CLIENT_CACHE_TTL: '300' }
const SEED = {
  apiScopes: [{ name: 'orders.read' }, { name: 'orders.write' }],
  apiResources: [{ name: 'orders-api', scopes: ['orders.read', 'orders.write'], secrets: [{ value: 'orders-secret' }] }],
  clients: [
    {
      clientId: 'backend',
      secrets: [{ value: 'backend-secret' }],
      allowedGrantTypes: ['client_credentials'],
      allowedScopes: ['orders.read'],
    },
    { clientId: 'batch', secrets: [{ value: 'batch-secret' }], allowedGrantTypes: ['client_credentials'], allowedScopes: ['orders.read'] },
    {
      clientId: 'writer',
      secrets: [{ value: 'writer-secret' }],
      allowedGrantTypes: ['client_credentials'],
      allowedScopes: ['orders.read', 'orders.write'],
    },
    { clientId: 'app', secrets: [{ value: 'app-secret' }], allowedGrantTypes: ['password'], allowedScopes: ['orders.read'] },
  ],
  users: [{ subjectId: 'alice-1', username: 'alice', password: 'alice-pw' }],
}

let writer: TestApp // the replica whose database the change is written to
let replica: TestApp // the other one, whose caches must drop
beforeAll(async () => {
  writer = await createTestApp({ env: CACHED })
  await applySeed(writer.db, SEED)
  replica = await createTestApp({ env: CACHED, testDb: writer.testDb })
})
afterAll(async () => {
  await replica.close()
  await writer.close()
})

const clientCredentials = (app: TestApp, id: string, secret: string, scope = 'orders.read') =>
  postFormBasic(app.app, '/connect/token', { grant_type: 'client_credentials', scope }, id, secret)

/** Real milliseconds until `fn` holds, polled every 10 ms; undefined when it does not within a second. */
async function withinASecond(fn: () => Promise<boolean>): Promise<number | undefined> {
  const start = performance.now()
  while (performance.now() - start < 1000) {
    if (await fn()) return performance.now() - start
    await new Promise((r) => setTimeout(r, 10))
  }
  return undefined
}

describe('cache invalidation across replicas (LISTEN/NOTIFY)', () => {
  it('a client disabled by the CLI is refused by the other replica within a second', async () => {
    expect((await clientCredentials(replica, 'backend', 'backend-secret')).statusCode).toBe(200) // now cached
    expect(await createPgClientStore(writer.db).setEnabled('backend', false)).toBe(true)
    const ms = await withinASecond(async () => (await clientCredentials(replica, 'backend', 'backend-secret')).statusCode === 401)
    expect(ms).toBeDefined()
    const res = await clientCredentials(replica, 'backend', 'backend-secret')
    expect(res.json()).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' })
  })

  it("a user disabled by the CLI has their tokens refused by the other replica's introspection within a second", async () => {
    const issued = await postForm(
      replica.app,
      '/connect/token',
      { grant_type: 'password', username: 'alice', password: 'alice-pw', scope: 'orders.read' },
      { authorization: basic('app', 'app-secret') },
    )
    expect(issued.statusCode).toBe(200)
    const token = issued.json().access_token as string
    const introspect = () => postFormBasic(replica.app, '/connect/introspect', { token }, 'orders-api', 'orders-secret')
    expect((await introspect()).json()).toMatchObject({ active: true, sub: 'alice-1' }) // enabled flag now cached
    expect(await createPgUserStore(writer.db).setEnabled('alice', false)).toBe(true)
    expect(await withinASecond(async () => (await introspect()).body === '{"active":false}')).toBeDefined()
  })

  it('an API scope disabled by a seed file is refused by the other replica within a second', async () => {
    expect((await clientCredentials(replica, 'writer', 'writer-secret', 'orders.write')).statusCode).toBe(200) // catalogue cached
    await applySeed(writer.db, { apiScopes: [{ name: 'orders.write', enabled: false }] })
    expect(
      await withinASecond(async () => (await clientCredentials(replica, 'writer', 'writer-secret', 'orders.write')).statusCode === 400),
    ).toBeDefined()
    expect((await clientCredentials(replica, 'writer', 'writer-secret', 'orders.write')).json()).toEqual({
      error: 'invalid_scope',
      error_description: 'scope holds a value that is not an enabled scope',
    })
  })

  it('a secret removed by SQL run by hand stops working on the other replica within a second', async () => {
    expect((await clientCredentials(replica, 'batch', 'batch-secret')).statusCode).toBe(200)
    await writer.db.query(`DELETE FROM client_secrets WHERE client_id = 'batch'`)
    expect(await withinASecond(async () => (await clientCredentials(replica, 'batch', 'batch-secret')).statusCode === 401)).toBeDefined()
  })

  it('a client the writing replica enables again is accepted by the other one within a second', async () => {
    expect((await clientCredentials(replica, 'backend', 'backend-secret')).statusCode).toBe(401)
    expect(await createPgClientStore(writer.db).setEnabled('backend', true)).toBe(true)
    expect(
      await withinASecond(async () => (await clientCredentials(replica, 'backend', 'backend-secret')).statusCode === 200),
    ).toBeDefined()
  })
})
