import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPgGrantStore } from '../../src/stores/grants.postgres.js'
import { createPgRevocationStore, parseRevocationPayload, revocationPayload } from '../../src/stores/revocations.postgres.js'
import { handleHash } from '../../src/stores/columns.postgres.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let authz: TestDb
beforeAll(async () => {
  authz = await createTestDb()
})
afterAll(() => authz.close())

const T0 = Date.UTC(2026, 0, 1)
const base = { clientId: 'c1', subjectId: 'u1', data: { a: 1 }, createdAt: T0, expiresAt: T0 + 3600_000 }

describe('GrantStore (postgres)', () => {
  it('stores by hash and finds by handle, with or without kind', async () => {
    const store = createPgGrantStore(authz.db)
    await store.store({ ...base, handle: 'h-find', kind: 'refresh_token', familyId: 'f-find' })
    const { rows } = await authz.db.query('SELECT handle_hash FROM persisted_grants WHERE family_id = $1', ['f-find'])
    expect(rows).toEqual([{ handle_hash: handleHash('h-find') }])
    expect(await store.find('h-find')).toEqual({
      handleHash: handleHash('h-find'),
      kind: 'refresh_token',
      clientId: 'c1',
      subjectId: 'u1',
      familyId: 'f-find',
      data: { a: 1 },
      createdAt: T0,
      expiresAt: T0 + 3600_000,
      consumedAt: undefined,
    })
    expect(await store.find('h-find', 'reference_token')).toBeUndefined()
    expect(await store.find('nope')).toBeUndefined()
  })

  it('consume succeeds exactly once under concurrent redemption', async () => {
    const store = createPgGrantStore(authz.db)
    await store.store({ ...base, handle: 'h-race', kind: 'refresh_token', familyId: 'f-race' })
    const results = await Promise.all(Array.from({ length: 8 }, () => store.consume('h-race', 'refresh_token', T0 + 1000)))
    expect(results.filter(Boolean)).toHaveLength(1)
    expect((await store.find('h-race'))?.consumedAt).toBe(T0 + 1000)
  })

  it("consume records the winner's redemption digest with consumed_at; a losing consume changes neither", async () => {
    const store = createPgGrantStore(authz.db)
    await store.store({ ...base, handle: 'h-digest', kind: 'authorization_code', familyId: 'f-digest' })
    const results = await Promise.all(['d-1', 'd-2', 'd-3'].map((d) => store.consume('h-digest', 'authorization_code', T0 + 1000, d)))
    const won = results.filter((r) => r !== undefined)
    expect(won).toHaveLength(1)
    const found = await store.find('h-digest')
    expect(found).toMatchObject({ consumedAt: T0 + 1000, redemptionHash: won[0]!.redemptionHash })
    expect(['d-1', 'd-2', 'd-3']).toContain(found!.redemptionHash)
    expect(await store.consume('h-digest', 'authorization_code', T0 + 2000, 'd-4')).toBeUndefined()
    expect(await store.find('h-digest')).toMatchObject({ consumedAt: T0 + 1000, redemptionHash: found!.redemptionHash })
  })

  it('remove only removes the owner’s grant of that kind', async () => {
    const store = createPgGrantStore(authz.db)
    await store.store({ ...base, handle: 'h-rm', kind: 'reference_token', familyId: 'f-rm' })
    expect(await store.remove('h-rm', 'reference_token', 'someone-else')).toBe(false)
    expect(await store.remove('h-rm', 'refresh_token', 'c1')).toBe(false)
    expect(await store.remove('h-rm', 'reference_token', 'c1')).toBe(true)
  })

  it('revokeFamily deletes the family and records its live JWT jtis as revoked', async () => {
    const store = createPgGrantStore(authz.db)
    const revocations = createPgRevocationStore(authz.db)
    await store.store({ ...base, handle: 'h-fam-rt', kind: 'refresh_token', familyId: 'fam' })
    await store.store({ ...base, handle: 'jti-live', kind: 'jwt_access_token', familyId: 'fam', data: { jti: 'jti-live' } })
    await store.store({
      ...base,
      handle: 'jti-old',
      kind: 'jwt_access_token',
      familyId: 'fam',
      data: { jti: 'jti-old' },
      expiresAt: T0 + 1000,
    })
    await store.store({ ...base, handle: 'h-other', kind: 'refresh_token', familyId: 'other-fam' })
    const heard: Array<string | undefined> = []
    const unlisten = await authz.db.listen('authz_revocations', (p) => heard.push(p))
    expect(await store.revokeFamily('fam', T0 + 2000)).toEqual({ removed: 3, revokedJtis: [{ jti: 'jti-live', expiresAt: T0 + 3600_000 }] })
    expect(await store.find('h-fam-rt')).toBeUndefined()
    expect(await store.find('h-other')).toBeDefined()
    expect(await revocations.listActive(T0 + 2000)).toEqual([{ jti: 'jti-live', expiresAt: T0 + 3600_000 }])
    for (let i = 0; i < 50 && heard.length === 0; i++) await new Promise((r) => setTimeout(r, 20))
    expect(heard).toEqual([revocationPayload('jti-live', T0 + 3600_000)])
    await unlisten()
  })

  it('removeExpired removes only expired rows, bounded by limit', async () => {
    const store = createPgGrantStore(authz.db)
    await store.store({ ...base, handle: 'h-exp1', kind: 'reference_token', familyId: 'x1', expiresAt: T0 - 2 })
    await store.store({ ...base, handle: 'h-exp2', kind: 'reference_token', familyId: 'x2', expiresAt: T0 - 1 })
    expect(await store.removeExpired(T0, 1)).toBe(1)
    expect(await store.removeExpired(T0, 10)).toBe(1)
    expect(await store.find('h-find')).toBeDefined()
  })
})

describe('RevocationStore payloads', () => {
  it('round-trips a jti with spaces', () => {
    expect(parseRevocationPayload(revocationPayload('a b', 42))).toEqual({ jti: 'a b', expiresAt: 42 })
    expect(parseRevocationPayload('garbage')).toBeUndefined()
  })
})
