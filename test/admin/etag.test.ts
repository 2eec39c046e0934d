// ETags of admin resources cover what a representation leaves out (secret and password hashes, an
// upstream client secret) so that a rotated secret changes them; every reader sees them, so they
// must not let a reader test guesses of a secret offline. They are keyed MACs with a server secret
// in the database: not the plain hash of the (view, hidden) pair, the same on every replica.
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { secretHash } from '../../src/tokens/handles.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { admin, adminToken, CC, createAdminTestApp, readToken } from './admin-fixtures.js'

let t: TestApp
let call: ReturnType<typeof admin>
let read: ReturnType<typeof admin>
beforeAll(async () => {
  t = await createAdminTestApp() // no KEY_ENCRYPTION_SECRET: an upstream client secret is stored as it is
  call = admin(t, await adminToken(t))
  read = admin(t, await readToken(t))
})
afterAll(async () => t.close())

/** The tag a reader could compute from a GET answer and a guess of what it leaves out, were it a plain hash. */
const plainTag = (view: unknown, hidden: unknown) =>
  `"${createHash('sha256')
    .update(JSON.stringify([view, hidden]))
    .digest('base64url')
    .slice(0, 27)}"`

describe('admin API: ETags do not reveal secrets', () => {
  it("a client's tag is not the plain hash of its view and its secrets' hashes, and changes when a secret rotates", async () => {
    const body = { secrets: [{ value: 'guessable-secret' }], allowedGrantTypes: [CC], allowedScopes: ['orders.read'] }
    expect((await call('PUT', '/admin/clients/probe', { body })).statusCode).toBe(201)
    const got = await read('GET', '/admin/clients/probe')
    expect(got.statusCode).toBe(200)
    expect(got.headers.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/)
    expect(got.headers.etag).not.toBe(plainTag(got.json(), [[secretHash('guessable-secret'), null, null]]))

    const added = await call('POST', '/admin/clients/probe/secrets')
    expect(added.statusCode).toBe(201)
    const rotated = await call('PUT', '/admin/clients/probe', { body: { ...body, secrets: [{ value: added.json().value }] } })
    expect(rotated.statusCode).toBe(200)
    expect(rotated.json()).toEqual(got.json())
    expect(rotated.headers.etag).not.toBe(got.headers.etag)
    expect((await read('GET', '/admin/clients/probe')).headers.etag).toBe(rotated.headers.etag)
  })

  it("an identity provider's tag does not hash its plaintext client secret", async () => {
    const provider = { displayName: 'Corp SSO', type: 'oidc', authority: 'https://sso.corp.example', clientId: 'authz-rp' }
    const res = await call('PUT', '/admin/identity-providers/corp', { body: { ...provider, clientSecret: 'upstream-secret' } })
    expect(res.statusCode).toBe(201)
    const got = await read('GET', '/admin/identity-providers/corp')
    expect(got.headers.etag).toBe(res.headers.etag)
    expect(got.headers.etag).not.toBe(plainTag(got.json(), ['upstream-secret', false]))
    const changed = await call('PUT', '/admin/identity-providers/corp', { body: { ...provider, clientSecret: 'another-secret' } })
    expect(changed.json()).toEqual(got.json())
    expect(changed.headers.etag).not.toBe(got.headers.etag)
  })

  it("an API resource's and a user's tags are not plain hashes of their secret and password hashes", async () => {
    const api = await read('GET', '/admin/api-resources/orders-api')
    expect(api.statusCode).toBe(200)
    expect(api.headers.etag).not.toBe(plainTag(api.json(), [[secretHash('orders-secret'), null, null]]))
    const user = await read('GET', '/admin/users/alice')
    const { rows } = await t.db.query<{ password_hash: string }>(`SELECT password_hash FROM users WHERE username = 'alice'`)
    expect(user.headers.etag).not.toBe(plainTag(user.json(), [rows[0]!.password_hash, null]))
  })

  it('is the same on another replica of the same database, so If-Match works across them', async () => {
    const other = await createTestApp({ env: { ADMIN_PORT: '0' }, testDb: t.testDb })
    try {
      const mine = await read('GET', '/admin/clients/probe')
      const theirs = await admin(other, await adminToken(other))('GET', '/admin/clients/probe')
      expect(theirs.statusCode).toBe(200)
      expect(theirs.headers.etag).toBe(mine.headers.etag)
      for (const path of ['/admin/users/alice', '/admin/api-resources/orders-api', '/admin/identity-providers/corp']) {
        expect((await admin(other, await adminToken(other))('GET', path)).headers.etag, path).toBe((await read('GET', path)).headers.etag)
      }
    } finally {
      await other.close()
    }
  })
})
