// The grant store's group commit and batched lookups (src/db/batcher.ts): same outcomes per
// caller as one statement each, fewer statements.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PG_UNIQUE_VIOLATION, pgErrorCode, type Db } from '../../src/db/db.js'
import { createPgGrantStore } from '../../src/stores/grants.postgres.js'
import type { NewGrant } from '../../src/stores/grants.js'
import { handleHash } from '../../src/stores/columns.postgres.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let authz: TestDb
beforeAll(async () => {
  authz = await createTestDb()
})
afterAll(() => authz.close())

const T0 = Date.UTC(2026, 0, 1)
const grant = (handle: string, over: Partial<NewGrant> = {}): NewGrant => ({
  handle,
  kind: 'reference_token',
  clientId: 'c1',
  subjectId: 'u1',
  familyId: `f-${handle}`,
  data: { scope: 'a b', quote: 'it\'s "quoted" \\ {x}' },
  createdAt: T0,
  expiresAt: T0 + 3600_000,
  ...over,
})

/** The store's database, counting the statements it sends. */
function counting(db: Db): { db: Db; statements: string[] } {
  const statements: string[] = []
  return {
    statements,
    db: { ...db, query: (sql, params, opts) => (statements.push(sql.trim().split(/\s+/)[0]!), db.query(sql, params, opts)) },
  }
}

async function storedHashes(prefix: string): Promise<string[]> {
  const { rows } = await authz.db.query<{ handle_hash: string }>(
    'SELECT handle_hash FROM persisted_grants WHERE family_id LIKE $1 ORDER BY handle_hash',
    [`f-${prefix}%`],
  )
  return rows.map((r) => r.handle_hash)
}

describe('GrantStore batching (postgres)', () => {
  it('commits concurrent store() calls in one INSERT, each resolving only once its row is visible', async () => {
    const c = counting(authz.db)
    const store = createPgGrantStore(c.db)
    const handles = Array.from({ length: 25 }, (_, i) => `many-${i}`)
    // On resolve, a separate statement (another pooled connection on pg) must already see the row.
    const seen = await Promise.all(
      handles.map((h) =>
        store
          .store(grant(h))
          .then(() => authz.db.query('SELECT 1 FROM persisted_grants WHERE handle_hash = $1', [handleHash(h)]).then((r) => r.rowCount)),
      ),
    )
    expect(seen).toEqual(handles.map(() => 1))
    expect(c.statements).toEqual(['INSERT'])
    expect(await storedHashes('many-')).toEqual(handles.map(handleHash).sort())
  })

  it('stores what it was given, field for field, through the batched path', async () => {
    const store = createPgGrantStore(authz.db)
    await Promise.all([
      store.store(grant('exact-1')),
      store.store(grant('exact-2', { kind: 'refresh_token', subjectId: undefined, expiresAt: undefined, createdAt: T0 + 1 })),
    ])
    expect(await Promise.all([store.find('exact-1'), store.find('exact-2')])).toEqual([
      {
        handleHash: handleHash('exact-1'),
        kind: 'reference_token',
        clientId: 'c1',
        subjectId: 'u1',
        familyId: 'f-exact-1',
        data: { scope: 'a b', quote: 'it\'s "quoted" \\ {x}' },
        createdAt: T0,
        expiresAt: T0 + 3600_000,
        consumedAt: undefined,
      },
      {
        handleHash: handleHash('exact-2'),
        kind: 'refresh_token',
        clientId: 'c1',
        subjectId: undefined,
        familyId: 'f-exact-2',
        data: { scope: 'a b', quote: 'it\'s "quoted" \\ {x}' },
        createdAt: T0 + 1,
        expiresAt: undefined,
        consumedAt: undefined,
      },
    ])
  })

  it('fails only the caller whose row is bad: a duplicate of a stored handle, or of one in the same batch', async () => {
    const store = createPgGrantStore(authz.db)
    await store.store(grant('dup-existing'))
    const results = await Promise.allSettled([
      store.store(grant('dup-a')),
      store.store(grant('dup-existing', { familyId: 'f-dup-intruder' })),
      store.store(grant('dup-b')),
      store.store(grant('dup-twice')),
      store.store(grant('dup-twice', { familyId: 'f-dup-twice-again' })),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'rejected'])
    for (const i of [1, 4]) expect(pgErrorCode((results[i] as PromiseRejectedResult).reason)).toBe(PG_UNIQUE_VIOLATION)
    expect(await storedHashes('dup-')).toEqual(['dup-a', 'dup-b', 'dup-existing', 'dup-twice'].map(handleHash).sort())
    expect((await store.find('dup-existing'))?.familyId).toBe('f-dup-existing') // the stored row is untouched
  })

  it('answers concurrent find() calls from one lookup, each its own row, kind filter preserved', async () => {
    const store = createPgGrantStore(authz.db)
    await Promise.all([store.store(grant('find-ref')), store.store(grant('find-rt', { kind: 'refresh_token' }))])
    const c = counting(authz.db)
    const reader = createPgGrantStore(c.db)
    const [ref, rt, missing, refAsRt, rtAsRt, refAgain] = await Promise.all([
      reader.find('find-ref'),
      reader.find('find-rt'),
      reader.find('find-missing'),
      reader.find('find-ref', 'refresh_token'),
      reader.find('find-rt', 'refresh_token'),
      reader.find('find-ref', 'reference_token'),
    ])
    expect(c.statements).toEqual(['SELECT'])
    expect([ref?.handleHash, ref?.kind, rt?.handleHash, rt?.kind]).toEqual([
      handleHash('find-ref'),
      'reference_token',
      handleHash('find-rt'),
      'refresh_token',
    ])
    expect([missing, refAsRt]).toEqual([undefined, undefined])
    expect(rtAsRt).toEqual(rt)
    expect(refAgain).toEqual(ref)
    expect(refAgain).not.toBe(ref) // each caller may use its own object freely
  })

  it('a find() after a store() resolved sees the row; a consumed grant shows its consumption time', async () => {
    const store = createPgGrantStore(authz.db)
    await store.store(grant('seq', { kind: 'refresh_token' }))
    expect((await store.find('seq', 'refresh_token'))?.consumedAt).toBeUndefined()
    expect((await store.consume('seq', 'refresh_token', T0 + 5))?.consumedAt).toBe(T0 + 5)
    expect((await store.find('seq'))?.consumedAt).toBe(T0 + 5)
  })

  it('never batches consume(): each redemption is its own UPDATE and exactly one wins', async () => {
    const store = createPgGrantStore(authz.db)
    await store.store(grant('once', { kind: 'refresh_token' }))
    const c = counting(authz.db)
    const racer = createPgGrantStore(c.db)
    const results = await Promise.all(Array.from({ length: 10 }, () => racer.consume('once', 'refresh_token', T0 + 9)))
    expect(results.filter(Boolean)).toHaveLength(1)
    expect(c.statements).toEqual(Array.from({ length: 10 }, () => 'UPDATE'))
  })

  it('keeps batches within maxBatch', async () => {
    const c = counting(authz.db)
    const store = createPgGrantStore(c.db, { maxBatch: 4 })
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.store(grant(`small-${i}`))))
    expect(c.statements).toEqual(['INSERT', 'INSERT', 'INSERT'])
    expect(await storedHashes('small-')).toHaveLength(10)
  })
})

describe('Db named statements', () => {
  it('run the same named statement repeatedly, with different values, outside and inside a transaction', async () => {
    const q = 'SELECT $1::int * 2 AS n'
    expect((await authz.db.query(q, [1], { name: 'test_double' })).rows).toEqual([{ n: 2 }])
    expect((await authz.db.query(q, [21], { name: 'test_double' })).rows).toEqual([{ n: 42 }])
    expect(await authz.db.transaction(async (tx) => (await tx.query(q, [5], { name: 'test_double' })).rows)).toEqual([{ n: 10 }])
  })
})
