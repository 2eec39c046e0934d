import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPgUserStore } from '../../src/stores/users.postgres.js'
import type { UserStore } from '../../src/stores/users.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let authz: TestDb
let store: UserStore
const alice = {
  subjectId: 'alice-0001',
  username: 'alice',
  passwordHash: 'scrypt$16384$8$1$salt$hash',
  enabled: true,
  claims: { name: 'Alice Example', email: 'Alice@Example.com' },
  cibaUserCodeHash: undefined,
  requireMfa: false,
}
beforeAll(async () => {
  authz = await createTestDb()
  store = createPgUserStore(authz.db)
  await store.upsert(alice)
  await store.upsert({
    subjectId: 'bob-1',
    username: 'bob',
    passwordHash: undefined,
    enabled: false,
    claims: {},
    cibaUserCodeHash: 'scrypt$x',
  })
})
afterAll(() => authz.close())

describe('PgUserStore', () => {
  it('finds users by subject id and by username', async () => {
    expect(await store.findBySubjectId('alice-0001')).toEqual(alice)
    expect(await store.findByUsername('bob')).toEqual({
      subjectId: 'bob-1',
      username: 'bob',
      passwordHash: undefined,
      enabled: false,
      claims: {},
      cibaUserCodeHash: 'scrypt$x',
      requireMfa: false,
    })
    expect(await store.findBySubjectId('alice')).toBeUndefined()
    expect(await store.findByUsername('nobody')).toBeUndefined()
  })

  it('tells whether a subject is an enabled user, a disabled one or nobody', async () => {
    expect([await store.isEnabled('alice-0001'), await store.isEnabled('bob-1'), await store.isEnabled('alice')]).toEqual([
      true,
      false,
      undefined,
    ])
  })

  it('resolves a login hint by username, subject id or case-insensitive e-mail', async () => {
    expect((await store.findByLoginHint('alice'))?.subjectId).toBe('alice-0001')
    expect((await store.findByLoginHint('alice-0001'))?.subjectId).toBe('alice-0001')
    expect((await store.findByLoginHint('ALICE@example.COM'))?.subjectId).toBe('alice-0001')
    expect(await store.findByLoginHint('nobody@example.com')).toBeUndefined()
  })

  it('does not resolve a hint that matches two users', async () => {
    // carol's username is bob's subject id: "bob-1" names two people.
    await store.upsert({
      subjectId: 'carol-1',
      username: 'bob-1',
      passwordHash: undefined,
      enabled: true,
      claims: {},
      cibaUserCodeHash: undefined,
    })
    expect(await store.findByLoginHint('bob-1')).toBeUndefined()
  })

  it('never gives a username another subject, whoever calls upsert (a check-then-write race included)', async () => {
    // OpenID Connect Core §2: a subject identifier is never reassigned. Re-keyed, alice's tokens,
    // consents and sessions would point at a subject id anyone could be given next.
    await expect(store.upsert({ ...alice, subjectId: 'mallory-1', passwordHash: 'scrypt$16384$8$1$salt$other' })).rejects.toMatchObject({
      code: '23514',
    })
    expect(await store.findByUsername('alice')).toEqual(alice)
    expect(await store.findBySubjectId('mallory-1')).toBeUndefined()
    await expect(authz.db.query(`UPDATE users SET subject_id = 'mallory-1' WHERE username = 'alice'`)).rejects.toMatchObject({
      code: '23514',
    })
    expect(await store.findByUsername('alice')).toEqual(alice)
  })

  it('upsert replaces the user with the same username and keeps updated_at when nothing changed', async () => {
    const before = await authz.db.query<{ updated_at: Date }>(`SELECT updated_at FROM users WHERE username = 'alice'`)
    await store.upsert(alice)
    const same = await authz.db.query<{ updated_at: Date }>(`SELECT updated_at FROM users WHERE username = 'alice'`)
    expect(same.rows).toEqual(before.rows)
    const changed = { ...alice, enabled: false, claims: { name: 'Alice' }, passwordHash: undefined }
    await store.upsert(changed)
    expect(await store.findByUsername('alice')).toEqual(changed)
    const { rows } = await authz.db.query(`SELECT count(*)::int AS n FROM users WHERE username = 'alice'`)
    expect(rows).toEqual([{ n: 1 }])
  })
})
