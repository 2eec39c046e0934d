import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPgClientStore } from '../../src/stores/clients.postgres.js'
import { createPgConsentStore } from '../../src/stores/consents.postgres.js'
import { createPgUserStore } from '../../src/stores/users.postgres.js'
import type { ConsentStore } from '../../src/stores/consents.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

const T0 = Date.UTC(2026, 0, 1)
const T1 = T0 + 60_000

let authz: TestDb
let store: ConsentStore
const user = (subjectId: string, username: string) =>
  createPgUserStore(authz.db).upsert({
    subjectId,
    username,
    passwordHash: undefined,
    enabled: true,
    claims: {},
    cibaUserCodeHash: undefined,
  })

beforeAll(async () => {
  authz = await createTestDb()
  store = createPgConsentStore(authz.db)
  await user('alice-1', 'alice')
  await user('bob-1', 'bob')
  await authz.db.exec(`INSERT INTO clients (client_id) VALUES ('web'), ('mobile'), ('Zeta'), ('gone')`)
})
afterAll(() => authz.close())

describe('PgConsentStore', () => {
  it('grants, then merges new scopes into the stored ones (union, stored order first)', async () => {
    expect(await store.find('alice-1', 'web')).toBeUndefined()
    const first = await store.grant('alice-1', 'web', ['openid', 'profile', 'profile'], T0)
    expect(first).toEqual({ subjectId: 'alice-1', clientId: 'web', scopes: ['openid', 'profile'], createdAt: T0, updatedAt: T0 })
    const merged = await store.grant('alice-1', 'web', ['email', 'openid', 'offline_access'], T1)
    expect(merged).toEqual({
      subjectId: 'alice-1',
      clientId: 'web',
      scopes: ['openid', 'profile', 'email', 'offline_access'],
      createdAt: T0,
      updatedAt: T1,
    })
    expect(await store.find('alice-1', 'web')).toEqual(merged)
    const { rows } = await authz.db.query(`SELECT count(*)::int AS n FROM consents WHERE subject_id = 'alice-1' AND client_id = 'web'`)
    expect(rows).toEqual([{ n: 1 }])
  })

  it('merges concurrent grants for one user and client without losing a scope', async () => {
    const scopes = Array.from({ length: 20 }, (_, i) => `api.s${i}`)
    await Promise.all(scopes.map((s, i) => store.grant('bob-1', 'mobile', [s, 'openid'], T0 + i)))
    const got = await store.find('bob-1', 'mobile')
    expect(got?.scopes.slice().sort()).toEqual([...scopes, 'openid'].sort())
    expect(got?.scopes.filter((s) => s === 'openid')).toHaveLength(1)
  })

  it('lists a user’s consents by client id and nobody else’s', async () => {
    await store.grant('alice-1', 'mobile', ['openid'], T0)
    await store.grant('alice-1', 'Zeta', ['email'], T0)
    expect((await store.list('alice-1')).map((c) => [c.clientId, c.scopes])).toEqual([
      ['Zeta', ['email']],
      ['mobile', ['openid']],
      ['web', ['openid', 'profile', 'email', 'offline_access']],
    ])
    expect((await store.list('bob-1')).map((c) => c.clientId)).toEqual(['mobile'])
    expect(await store.list('nobody')).toEqual([])
  })

  it('revokes one client, then every client, of one user only', async () => {
    expect(await store.revoke('alice-1', 'mobile')).toBe(1)
    expect(await store.revoke('alice-1', 'mobile')).toBe(0)
    expect((await store.list('alice-1')).map((c) => c.clientId)).toEqual(['Zeta', 'web'])
    expect(await store.revoke('alice-1')).toBe(2)
    expect(await store.list('alice-1')).toEqual([])
    expect(await store.revoke('alice-1')).toBe(0)
    expect((await store.list('bob-1')).map((c) => c.clientId)).toEqual(['mobile'])
  })

  it('goes with its user and with its client; never follows a username to another subject', async () => {
    await user('carol-1', 'carol')
    await store.grant('carol-1', 'web', ['openid'], T0)
    await store.grant('carol-1', 'gone', ['openid'], T0)
    await store.grant('bob-1', 'gone', ['openid'], T0)
    expect(await createPgClientStore(authz.db).remove('gone')).toBe(true)
    expect((await store.list('carol-1')).map((c) => c.clientId)).toEqual(['web'])
    expect((await store.list('bob-1')).map((c) => c.clientId)).toEqual(['mobile'])

    // A subject never changes (OIDC Core §2): carol's consents are not handed to a carol-2.
    await expect(user('carol-2', 'carol')).rejects.toMatchObject({ code: '23514' })
    expect((await store.list('carol-1')).map((c) => c.clientId)).toEqual(['web'])
    expect(await store.list('carol-2')).toEqual([])

    await authz.db.query(`DELETE FROM users WHERE subject_id = 'carol-1'`)
    const { rows } = await authz.db.query(`SELECT count(*)::int AS n FROM consents WHERE subject_id IN ('carol-1', 'carol-2')`)
    expect(rows).toEqual([{ n: 0 }])
  })

  it('refuses a consent for a user or client that does not exist', async () => {
    await expect(store.grant('nobody', 'web', ['openid'], T0)).rejects.toMatchObject({ code: '23503' })
    await expect(store.grant('bob-1', 'no-such-client', ['openid'], T0)).rejects.toMatchObject({ code: '23503' })
  })
})
