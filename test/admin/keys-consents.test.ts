// /admin/keys (list, rotate) and /admin/users/{username}/consents (list, revoke), as the CLI's
// `authz keys` and `authz consents` do them; no private key material in any answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConsentList, KeyList, Revoked } from '../../src/admin/keys-consents.js'
import { createConsentService } from '../../src/interaction/consent.js'
import { createPgConsentStore } from '../../src/stores/consents.postgres.js'
import { loadMigrations } from '../../src/db/migrate.js'
import type { TestApp } from '../helpers/app.js'
import { admin, adminAudit, adminToken, createAdminTestApp, readToken } from './admin-fixtures.js'

let t: TestApp
let call: ReturnType<typeof admin>
beforeAll(async () => {
  t = await createAdminTestApp()
  call = admin(t, await adminToken(t))
})
afterAll(async () => t.close())

const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)

describe('admin API: migrations', () => {
  it('lists every migration applied, in order, with the checksum of its file, to a reader', async () => {
    const res = await admin(t, await readToken(t))('GET', '/admin/migrations')
    expect(res.statusCode).toBe(200)
    const files = await loadMigrations()
    expect(res.json()).toEqual({ items: files.map((m) => ({ version: m.version, name: m.name, checksum: m.checksum })) })
  })
})

describe('admin API: signing keys', () => {
  it('lists the keys without private parts and rotates one algorithm, audited', async () => {
    const before = (await call('GET', '/admin/keys')).json<{ items: Record<string, unknown>[] }>()
    expect(before.items.map((k) => k.alg).sort()).toEqual(['ES256', 'RS256'])
    for (const k of before.items) {
      expect(Object.keys(k).sort()).toEqual(['activateAt', 'alg', 'createdAt', 'encrypted', 'kid', 'privateKey', 'status'])
      expect(k).toMatchObject({ status: 'current', createdAt: ISO, activateAt: ISO })
    }
    const res = await call('POST', '/admin/keys/rotate', { body: { alg: 'ES256' } })
    expect(res.statusCode).toBe(201)
    // The answers are what the OpenAPI document says they are (it is made from these schemas).
    expect(KeyList.safeParse(before).error).toBeUndefined()
    expect(KeyList.safeParse(res.json()).error).toBeUndefined()
    const added = res.json<{ items: Record<string, unknown>[] }>().items
    expect(added).toEqual([expect.objectContaining({ alg: 'ES256', status: 'pending' })])
    expect((await call('GET', '/admin/keys')).json().items).toHaveLength(3)
    expect(adminAudit(t).at(-1)).toMatchObject({ resource: 'keys', action: 'rotate', changes: [added[0]!.kid] })
  })

  it('refuses an unknown algorithm with its path, and a read-only token', async () => {
    const bad = await call('POST', '/admin/keys/rotate', { body: { alg: 'HS256' } })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().errors).toEqual([{ path: 'alg', detail: 'Invalid option: expected one of "ES256"|"RS256"|"PS256"|"EdDSA"' }])
    expect((await admin(t, await readToken(t))('POST', '/admin/keys/rotate')).statusCode).toBe(403)
  })
})

describe('admin API: consents', () => {
  it("lists a user's consents and revokes one, then all", async () => {
    const consents = createConsentService({ clock: t.clock, consents: createPgConsentStore(t.db) })
    await consents.grant('alice-1', 'backend', ['orders.read'], true)
    await consents.grant('alice-1', 'auditor', ['openid'], true)
    const list = await call('GET', '/admin/users/alice/consents')
    expect(list.statusCode).toBe(200)
    expect(list.json()).toEqual({
      items: [
        { clientId: 'auditor', scopes: ['openid'], createdAt: ISO, updatedAt: ISO },
        { clientId: 'backend', scopes: ['orders.read'], createdAt: ISO, updatedAt: ISO },
      ],
    })
    expect(ConsentList.safeParse(list.json()).error).toBeUndefined()
    expect((await call('DELETE', '/admin/users/alice/consents/backend')).statusCode).toBe(204)
    expect((await call('DELETE', '/admin/users/alice/consents/backend')).statusCode).toBe(404)
    expect(adminAudit(t).at(-1)).toMatchObject({ resource: 'users/alice/consents/backend', action: 'delete' })
    const revoked = (await call('DELETE', '/admin/users/alice/consents')).json()
    expect(revoked).toEqual({ revoked: 1 })
    expect(Revoked.safeParse(revoked).error).toBeUndefined()
    expect((await call('GET', '/admin/users/alice/consents')).json()).toEqual({ items: [] })
    expect((await call('GET', '/admin/users/nobody/consents')).statusCode).toBe(404)
  })

  it("lists a user's consents a page at a time, by client", async () => {
    const consents = createConsentService({ clock: t.clock, consents: createPgConsentStore(t.db) })
    for (const client of ['backend', 'auditor', 'automation']) await consents.grant('alice-1', client, ['openid'], true)
    const first = (await call('GET', '/admin/users/alice/consents?limit=2')).json()
    expect(first.items.map((c: { clientId: string }) => c.clientId)).toEqual(['auditor', 'automation'])
    expect(ConsentList.safeParse(first).error).toBeUndefined()
    const second = (await call('GET', `/admin/users/alice/consents?limit=2&cursor=${first.nextCursor}`)).json()
    expect(second).toEqual({ items: [{ clientId: 'backend', scopes: ['openid'], createdAt: ISO, updatedAt: ISO }] })
    const bad = await call('GET', '/admin/users/alice/consents?limit=201')
    expect(bad.statusCode).toBe(400)
    expect(bad.json().errors).toEqual([{ path: 'limit', detail: 'Too big: expected number to be <=200' }])
    expect((await call('DELETE', '/admin/users/alice/consents')).json()).toEqual({ revoked: 3 })
  })
})
