// The in-memory view of blocked client/address pairs: how stale it may be, and what it costs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createManualClock } from '../../src/domain/clock.js'
import { createClientAuthThrottle } from '../../src/client-auth/throttle.js'
import { createPgFailureCounterStore } from '../../src/stores/failure-counters.postgres.js'
import type { FailureCounterStore } from '../../src/stores/failure-counters.js'
import { captureLogs } from '../helpers/app.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let authz: TestDb
const clock = createManualClock()
const { logs, logger } = captureLogs({ logLevel: 'info' })
const policy = { limit: 2, baseSeconds: 60, maxSeconds: 3600 }
beforeAll(async () => {
  authz = await createTestDb()
})
afterAll(() => authz.close())

function replica(failures: FailureCounterStore = createPgFailureCounterStore(authz.db)) {
  const throttle = createClientAuthThrottle({ failures, clock, logger, policy, staleSeconds: 5 })
  return {
    throttle,
    async blockedFor(id: string, address: string) {
      await throttle.refreshIfStale()
      return throttle.blockedFor(id, address)
    },
  }
}

describe('client authentication throttle', () => {
  it('another replica sees a block within staleSeconds, and at once on its own next failure', async () => {
    const a = replica()
    const b = replica()
    expect(await b.blockedFor('c1', '192.0.2.1')).toBe(0) // loaded now
    await a.throttle.recordFailure('c1', '192.0.2.1', 'bad_secret')
    expect(await a.throttle.recordFailure('c1', '192.0.2.1', 'bad_secret')).toBe(60)
    expect(await a.blockedFor('c1', '192.0.2.1')).toBe(60)
    clock.advance(4)
    expect(await b.blockedFor('c1', '192.0.2.1')).toBe(0) // stale, within the bound
    clock.advance(1)
    expect(await b.blockedFor('c1', '192.0.2.1')).toBe(55)

    const c = replica()
    expect(await c.blockedFor('c2', '192.0.2.2')).toBe(0)
    await a.throttle.recordFailure('c2', '192.0.2.2', 'bad_secret')
    await a.throttle.recordFailure('c2', '192.0.2.2', 'bad_secret')
    expect(await c.throttle.recordFailure('c2', '192.0.2.2', 'bad_secret')).toBe(60) // not counted, but learnt
    expect(c.throttle.blockedFor('c2', '192.0.2.2')).toBe(60)
  })

  it('asks the database nothing on a success unless it counted failures for that pair', async () => {
    const store = createPgFailureCounterStore(authz.db)
    const calls: string[] = []
    const spy: FailureCounterStore = {
      ...store,
      recordFailure: (...args) => (calls.push('recordFailure'), store.recordFailure(...args)),
      clear: (...args) => (calls.push('clear'), store.clear(...args)),
      listBlocked: (...args) => (calls.push('listBlocked'), store.listBlocked(...args)),
    }
    const r = replica(spy)
    await r.blockedFor('c3', '192.0.2.3')
    calls.length = 0
    for (let i = 0; i < 100; i++) {
      expect(r.throttle.refreshIfStale()).toBeUndefined()
      expect(r.throttle.blockedFor('c3', '192.0.2.3')).toBe(0)
      expect(r.throttle.recordSuccess('c3', '192.0.2.3')).toBeUndefined()
    }
    expect(calls).toEqual([])
    await r.throttle.recordFailure('c3', '192.0.2.3', 'bad_secret')
    await r.throttle.recordSuccess('c3', '192.0.2.3')
    expect(r.throttle.recordSuccess('c3', '192.0.2.3')).toBeUndefined()
    expect(calls).toEqual(['recordFailure', 'clear'])
  })

  it('keeps the blocks it knows when a reload fails, and logs it', async () => {
    const store = createPgFailureCounterStore(authz.db)
    let broken = false
    const r = replica({ ...store, listBlocked: (...args) => (broken ? Promise.reject(new Error('db down')) : store.listBlocked(...args)) })
    await r.throttle.recordFailure('c4', '192.0.2.4', 'bad_secret')
    await r.throttle.recordFailure('c4', '192.0.2.4', 'bad_secret')
    broken = true
    clock.advance(10)
    expect(await r.blockedFor('c4', '192.0.2.4')).toBe(50)
    expect(logs.some((l) => l.includes('reloading blocked clients failed'))).toBe(true)
  })

  it('answers a failure without a block when it cannot be counted, and logs that', async () => {
    const store = createPgFailureCounterStore(authz.db)
    const r = replica({ ...store, recordFailure: () => Promise.reject(new Error('db down')) })
    expect(await r.throttle.recordFailure('c5', '192.0.2.5', 'bad_secret')).toBe(0)
    expect(logs.some((l) => l.includes('counting a failed client authentication failed') && l.includes('"client_id":"c5"'))).toBe(true)
  })
})
