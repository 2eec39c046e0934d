import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { basic, createTestApp, type TestApp } from '../../helpers/app.js'
import { postForm, postFormBasic } from '../../helpers/http.js'
import { CC, seedTokens } from '../token/token-fixtures.js'

let authz: TestApp
let replica: TestApp // a second app on the same database: another replica
beforeAll(async () => {
  authz = await createTestApp()
  await seedTokens(authz)
  replica = await createTestApp({ testDb: authz.testDb })
})
afterAll(async () => {
  await replica.close()
  await authz.close()
})

async function token(id: string, secret: string, scope = 'orders.read') {
  const res = await postFormBasic(authz.app, '/connect/token', { grant_type: CC, scope }, id, secret)
  expect(res.statusCode).toBe(200)
  return res.json().access_token as string
}
const revoke = (params: Record<string, string>, headers: Record<string, string> = {}) =>
  postForm(authz.app, '/connect/revocation', params, headers)
const introspect = (app: TestApp, tok: string) =>
  postFormBasic(app.app, '/connect/introspect', { token: tok }, 'orders-api', 'orders-secret')

/** Waits (bounded) for the NOTIFY to reach the other replica; real time, not protocol time. */
async function eventually(fn: () => Promise<boolean>) {
  for (let i = 0; i < 100; i++) {
    if (await fn()) return true
    await new Promise((r) => setTimeout(r, 20))
  }
  return false
}

describe('revocation (RFC 7009)', () => {
  it('revokes a JWT by jti on this replica at once and on the other through NOTIFY', async () => {
    const jwt = await token('backend', 's3cret')
    expect((await introspect(replica, jwt)).json().active).toBe(true)
    const res = await revoke({ token: jwt, token_type_hint: 'access_token' }, { authorization: basic('backend', 's3cret') })
    expect(res.statusCode).toBe(200)
    expect(res.body).toBe('')
    expect(res.headers['cache-control']).toBe('no-store')
    expect((await introspect(authz, jwt)).body).toBe('{"active":false}')
    expect(await eventually(async () => (await introspect(replica, jwt)).body === '{"active":false}')).toBe(true)
    const { rows } = await authz.db.query<{ client_id: string }>('SELECT client_id FROM revoked_tokens')
    expect(rows).toEqual([{ client_id: 'backend' }])
  })

  it('a replica that starts later loads the revocations from the database', async () => {
    const jwt = await token('backend', 's3cret')
    await revoke({ token: jwt, client_id: 'backend', client_secret: 's3cret' })
    const late = await (await import('../../helpers/app.js')).createTestApp({ testDb: authz.testDb })
    try {
      expect((await introspect(late, jwt)).body).toBe('{"active":false}')
    } finally {
      await late.close()
    }
  })

  it('revokes a reference token and removes its row', async () => {
    const ref = await token('ref-client', 'ref-secret')
    expect((await introspect(authz, ref)).json().active).toBe(true)
    expect((await revoke({ token: ref }, { authorization: basic('ref-client', 'ref-secret') })).statusCode).toBe(200)
    expect((await introspect(authz, ref)).body).toBe('{"active":false}')
    expect((await introspect(replica, ref)).body).toBe('{"active":false}')
    const { rows } = await authz.db.query(`SELECT 1 FROM persisted_grants WHERE kind = 'reference_token'`)
    expect(rows).toEqual([])
  })

  it("answers 200 for unknown tokens and leaves another client's tokens alone", async () => {
    const jwt = await token('backend', 's3cret')
    const ref = await token('ref-client', 'ref-secret')
    for (const tok of ['unknown', jwt, ref, 'a.b.c']) {
      const res = await revoke({ token: tok }, { authorization: basic('other', 'other-secret') })
      expect(res.statusCode).toBe(200)
    }
    expect((await introspect(authz, jwt)).json().active).toBe(true)
    expect((await introspect(authz, ref)).json().active).toBe(true)
  })

  it('authenticates the client and requires token', async () => {
    const bad = await revoke({ token: 'x' }, { authorization: basic('backend', 'nope') })
    expect(bad.statusCode).toBe(401)
    expect(bad.json()).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' })
    const missing = await revoke({}, { authorization: basic('backend', 's3cret') })
    expect(missing.statusCode).toBe(400)
    expect(missing.json()).toEqual({ error: 'invalid_request', error_description: 'token is required' })
  })
})
