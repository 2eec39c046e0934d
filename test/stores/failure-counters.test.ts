import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPgFailureCounterStore } from '../../src/stores/failure-counters.postgres.js'
import type { FailureCounterStore, FailureKey } from '../../src/stores/failure-counters.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let authz: TestDb
let store: FailureCounterStore
const T0 = Date.UTC(2026, 0, 1)
const policy = { limit: 3, baseSeconds: 60, maxSeconds: 300 }
let n = 0
const freshKey = (): FailureKey => ({ kind: 'client', name: `c${++n}`, source: '192.0.2.1' })

beforeAll(async () => {
  authz = await createTestDb()
  store = createPgFailureCounterStore(authz.db)
})
afterAll(() => authz.close())

describe('PgFailureCounterStore', () => {
  it('blocks at the limit, counts nothing while blocked, and doubles the block next time', async () => {
    const key = freshKey()
    expect(await store.recordFailure(key, policy, T0)).toEqual({ counted: true, failures: 1, blocks: 0, blockedUntil: undefined })
    expect(await store.recordFailure(key, policy, T0)).toEqual({ counted: true, failures: 2, blocks: 0, blockedUntil: undefined })
    expect(await store.recordFailure(key, policy, T0)).toEqual({ counted: true, failures: 0, blocks: 1, blockedUntil: T0 + 60_000 })
    expect(await store.recordFailure(key, policy, T0 + 59_999)).toEqual({ counted: false, blockedUntil: T0 + 60_000 })
    expect(await store.listBlocked('client', T0 + 1000, 10)).toContainEqual({
      name: key.name,
      source: key.source,
      blockedUntil: T0 + 60_000,
    })
    const t1 = T0 + 60_000
    await store.recordFailure(key, policy, t1)
    await store.recordFailure(key, policy, t1)
    expect(await store.recordFailure(key, policy, t1)).toEqual({ counted: true, failures: 0, blocks: 2, blockedUntil: t1 + 120_000 })
  })

  it('forgive takes back one counted failure, lifts the block that failure started, and does nothing once the counter moved on', async () => {
    const key = freshKey()
    const first = await store.recordFailure(key, policy, T0)
    await store.recordFailure(key, policy, T0)
    if (!first.counted) throw new Error('counted')
    await store.forgive(key, first, policy)
    expect(await store.recordFailure(key, policy, T0)).toEqual({ counted: true, failures: 2, blocks: 0, blockedUntil: undefined })
    const blocking = await store.recordFailure(key, policy, T0)
    expect(blocking).toEqual({ counted: true, failures: 0, blocks: 1, blockedUntil: T0 + 60_000 })
    if (!blocking.counted) throw new Error('counted')
    await store.forgive(key, blocking, policy)
    expect(await store.blockedUntil(key, T0)).toBeUndefined()
    const again = await store.recordFailure(key, policy, T0) // back at limit - 1: this one blocks
    expect(again).toEqual({ counted: true, failures: 0, blocks: 1, blockedUntil: T0 + 60_000 })
    // A stale record (a failure counted before the counter moved on) changes nothing.
    await store.forgive(key, first, policy)
    expect(await store.blockedUntil(key, T0)).toBe(T0 + 60_000)
  })

  it('caps the block at maxSeconds', async () => {
    const key = freshKey()
    let now = T0
    const until: number[] = []
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 3; i++) {
        const r = await store.recordFailure(key, policy, now)
        if (r.counted && r.blockedUntil) until.push(r.blockedUntil - now)
      }
      now += 300_000 // the longest block is over, well within the memory of maxSeconds past it
    }
    expect(until).toEqual([60_000, 120_000, 240_000, 300_000, 300_000])
  })

  it('forgets failures and the escalation maxSeconds after the last one, even before cleanup', async () => {
    const key = freshKey()
    for (let i = 0; i < 3; i++) await store.recordFailure(key, policy, T0)
    const later = T0 + 60_000 + 300_000 // block over, plus maxSeconds
    expect(await store.recordFailure(key, policy, later)).toEqual({ counted: true, failures: 1, blocks: 0, blockedUntil: undefined })
  })

  it('blocks on the first failure when the limit is 1', async () => {
    const key = freshKey()
    expect(await store.recordFailure(key, { ...policy, limit: 1 }, T0)).toEqual({
      counted: true,
      failures: 0,
      blocks: 1,
      blockedUntil: T0 + 60_000,
    })
  })

  it('counts concurrent failures exactly: never more than the limit before the block', async () => {
    for (let trial = 0; trial < 5; trial++) {
      const key = freshKey()
      const results = await Promise.all(Array.from({ length: 20 }, () => store.recordFailure(key, { ...policy, limit: 10 }, T0)))
      expect(results.filter((r) => r.counted)).toHaveLength(10)
      expect(results.filter((r) => r.counted && r.blockedUntil !== undefined)).toHaveLength(1)
    }
  })

  it('clears one counter, every counter of a name, and removes expired rows', async () => {
    const key = freshKey()
    await store.recordFailure(key, policy, T0)
    expect(await store.clear(key)).toBe(true)
    expect(await store.clear(key)).toBe(false)
    await store.recordFailure({ kind: 'user', name: 'sub-x', source: '' }, policy, T0)
    await store.recordFailure({ kind: 'user_code', name: 'sub-x', source: 'client-a' }, policy, T0)
    await store.recordFailure({ kind: 'client', name: 'sub-x', source: '192.0.2.9' }, policy, T0)
    expect(await store.clearName(['user', 'user_code'], 'sub-x')).toBe(2)
    const before = T0 + 10 * 365 * 86_400_000
    expect(await store.removeExpired(before, 1000)).toBeGreaterThan(0)
    const { rows } = await authz.db.query<{ n: string }>('SELECT count(*) AS n FROM failure_counters')
    expect(Number(rows[0]!.n)).toBe(0)
  })
})
