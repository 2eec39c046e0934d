import { describe, expect, it } from 'vitest'
import { createBatcher } from '../../src/db/batcher.js'

const ok = <T>(value: T): PromiseSettledResult<T> => ({ status: 'fulfilled', value })

/** A run function that records its batches and answers each item doubled. */
function recorder() {
  const batches: number[][] = []
  return {
    batches,
    run: async (items: number[]) => {
      batches.push(items)
      return items.map((i) => ok(i * 2))
    },
  }
}

describe('createBatcher', () => {
  it('runs calls made in the same turn as one batch and answers each caller its own result', async () => {
    const r = recorder()
    const b = createBatcher({ maxBatch: 10, run: r.run })
    expect(await Promise.all([1, 2, 3].map((i) => b.add(i)))).toEqual([2, 4, 6])
    expect(r.batches).toEqual([[1, 2, 3]])
    expect(await b.add(4)).toBe(8)
    expect(r.batches).toEqual([[1, 2, 3], [4]])
  })

  it('collects calls from separate callbacks of one event-loop turn (requests on different sockets)', async () => {
    const r = recorder()
    const b = createBatcher({ maxBatch: 10, run: r.run })
    const results = await new Promise<number[]>((resolve) => {
      const ps: Array<Promise<number>> = []
      // Two timers due together fire in the same timers phase, before the batch's setImmediate.
      setTimeout(() => ps.push(b.add(1)), 0)
      setTimeout(() => {
        ps.push(b.add(2))
        void Promise.all(ps).then(resolve)
      }, 0)
    })
    expect(results).toEqual([2, 4])
    expect(r.batches).toEqual([[1, 2]])
  })

  it('never hands run more than maxBatch items', async () => {
    const r = recorder()
    const b = createBatcher({ maxBatch: 2, run: r.run })
    expect(await Promise.all([1, 2, 3, 4, 5].map((i) => b.add(i)))).toEqual([2, 4, 6, 8, 10])
    expect(r.batches).toEqual([[1, 2], [3, 4], [5]])
  })

  it('with maxInFlight, calls made while batches run wait and join the next batch', async () => {
    const batches: number[][] = []
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const b = createBatcher({
      maxBatch: 100,
      maxInFlight: 1,
      run: async (items: number[]) => {
        batches.push(items)
        if (batches.length === 1) await gate
        return items.map((i) => ok(i))
      },
    })
    const first = b.add(1)
    await new Promise((r) => setImmediate(r)) // the first batch is now running
    const later = [2, 3, 4].map((i) => b.add(i))
    await new Promise((r) => setTimeout(r, 10))
    expect(batches).toEqual([[1]]) // still held back
    release()
    expect(await Promise.all([first, ...later])).toEqual([1, 2, 3, 4])
    expect(batches).toEqual([[1], [2, 3, 4]])
  })

  it('settles each caller with its own outcome when run reports per-item failures', async () => {
    const b = createBatcher({
      maxBatch: 10,
      run: async (items: number[]) =>
        items.map((i): PromiseSettledResult<number> => (i === 2 ? { status: 'rejected', reason: new Error('bad 2') } : ok(i))),
    })
    const results = await Promise.allSettled([1, 2, 3].map((i) => b.add(i)))
    expect(results).toEqual([ok(1), { status: 'rejected', reason: new Error('bad 2') }, ok(3)])
  })

  it('rejects every caller of a batch whose run throws, and keeps serving later calls', async () => {
    let fail = true
    const b = createBatcher({
      maxBatch: 10,
      maxInFlight: 1,
      run: async (items: number[]) => {
        if (fail) throw new Error('connection lost')
        return items.map((i) => ok(i))
      },
    })
    const results = await Promise.allSettled([1, 2].map((i) => b.add(i)))
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    fail = false
    expect(await b.add(3)).toBe(3)
  })

  it('rejects every caller when run answers the wrong number of results', async () => {
    const b = createBatcher({ maxBatch: 10, run: async () => [ok(1)] })
    const results = await Promise.allSettled([1, 2].map((i) => b.add(i)))
    expect(results).toEqual([
      { status: 'rejected', reason: new Error('batch of 2 answered 1 results') },
      { status: 'rejected', reason: new Error('batch of 2 answered 1 results') },
    ])
  })

  it('refuses a maxBatch below 1', () => {
    expect(() => createBatcher({ maxBatch: 0, run: async () => [] })).toThrow(RangeError)
  })
})
