// Collects calls made in the same turn of the event loop and runs them as one: a group commit
// for many single-row writes, one `= ANY($1)` lookup for many single-row reads. Under load a
// database round trip (and, for writes, a WAL flush) then serves a whole batch of requests.
//
// Calls made before the next setImmediate (every request the event loop handled in this poll
// phase) share a batch; a batch never exceeds maxBatch items. With maxInFlight set, calls made
// while that many batches are running wait and join the next batch, which grows under load.

export interface BatcherOptions<I, O> {
  /** Runs one batch; answers one settled result per item, in order. */
  run(items: I[]): Promise<Array<PromiseSettledResult<O>>>
  /** Largest batch handed to run (≥ 1). */
  maxBatch: number
  /** Batches running at once; further calls queue meanwhile. Default: unbounded. */
  maxInFlight?: number
}

export interface Batcher<I, O> {
  /** Resolves or rejects with this item's own outcome once its batch has run. */
  add(item: I): Promise<O>
}

interface Pending<I, O> {
  item: I
  resolve(value: O): void
  reject(reason: unknown): void
}

export function createBatcher<I, O>(opts: BatcherOptions<I, O>): Batcher<I, O> {
  if (!Number.isInteger(opts.maxBatch) || opts.maxBatch < 1) throw new RangeError('maxBatch must be a positive integer')
  const maxInFlight = opts.maxInFlight ?? Infinity
  let queue: Array<Pending<I, O>> = []
  let scheduled = false
  let inFlight = 0

  const runBatch = async (batch: Array<Pending<I, O>>) => {
    inFlight++
    try {
      const results = await opts.run(batch.map((p) => p.item))
      if (results.length !== batch.length) throw new Error(`batch of ${batch.length} answered ${results.length} results`)
      results.forEach((r, i) => (r.status === 'fulfilled' ? batch[i]!.resolve(r.value) : batch[i]!.reject(r.reason)))
    } catch (err) {
      for (const p of batch) p.reject(err)
    } finally {
      inFlight--
      flush()
    }
  }

  const flush = () => {
    while (queue.length > 0 && inFlight < maxInFlight) {
      const batch = queue.slice(0, opts.maxBatch)
      queue = queue.slice(batch.length)
      void runBatch(batch)
    }
  }

  return {
    add(item) {
      return new Promise<O>((resolve, reject) => {
        queue.push({ item, resolve, reject })
        if (scheduled) return
        scheduled = true
        setImmediate(() => {
          scheduled = false
          flush()
        })
      })
    },
  }
}
