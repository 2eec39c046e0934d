// The outbox kit shared by the CIBA ping/push and back-channel logout workers, on an in-memory
// store and a fetch that answers as told: which answers are retried and when (on the injected
// clock), how rows are claimed, and what becomes of an outcome the database does not take.
import { describe, expect, it } from 'vitest'
import { createManualClock } from '../../src/domain/clock.js'
import { UnavailableError } from '../../src/errors.js'
import { createOutboxWorker, OUTBOX_DEFAULTS, type OutboxOptions, type OutboxRow, type OutboxStore } from '../../src/jobs/outbox.js'

interface Row extends OutboxRow {
  status: 'pending' | 'delivered' | 'failed'
  dueAt: number
  leasedUntil: number
  history: string[]
}

function createStore(clock: { now(): number }, count: number) {
  const rows: Row[] = Array.from({ length: count }, (_, i) => ({
    id: `r${i}`,
    clientId: 'c',
    attempts: 0,
    status: 'pending',
    dueAt: clock.now(),
    leasedUntil: 0,
    history: [],
  }))
  /** Set to make the next `down` writes fail as a dropped connection does. */
  const outage = { down: 0 }
  const claims: string[][] = []
  const latest = (d: OutboxRow) => {
    if (outage.down > 0) {
      outage.down--
      throw new UnavailableError('database unavailable')
    }
    const row = rows.find((r) => r.id === d.id)
    return row && row.status === 'pending' && row.attempts === d.attempts ? row : undefined
  }
  const store: OutboxStore<OutboxRow> = {
    async finish(d, status, r) {
      const row = latest(d)
      if (!row) return false
      row.status = status
      row.history.push(`${status}:${r.httpStatus ?? r.error}`)
      return true
    },
    async retry(d, nextAttemptAt, r) {
      const row = latest(d)
      if (!row) return false
      row.dueAt = nextAttemptAt
      row.leasedUntil = 0
      row.history.push(`retry:${r.httpStatus ?? r.error}@${nextAttemptAt - clock.now()}`)
      return true
    },
    async release(d) {
      const row = latest(d)
      if (!row) return false
      row.attempts--
      row.leasedUntil = 0
      row.history.push('released')
      return true
    },
    async nextDue() {
      return undefined
    },
    async subscribe() {
      return async () => {}
    },
    async claimDue(now, leaseUntil, limit) {
      const due = rows.filter((r) => r.status === 'pending' && r.dueAt <= now && r.leasedUntil <= now).slice(0, limit)
      for (const r of due) {
        r.attempts++
        r.leasedUntil = leaseUntil
      }
      claims.push(due.map((r) => r.id))
      return due.map((r) => ({ id: r.id, clientId: r.clientId, attempts: r.attempts }))
    },
  }
  return { rows, store, claims, outage }
}

type Answer = number | 'timeout' | 'refused'

/** A fetch answering each request with the next of `answers` (the last repeats). */
function answering(answers: Answer[]): typeof fetch {
  let i = 0
  return async () => {
    const a = answers[Math.min(i++, answers.length - 1)]
    if (a === 'timeout') throw new DOMException('The operation timed out.', 'TimeoutError')
    if (a === 'refused') throw new TypeError('fetch failed')
    return new Response(null, { status: a })
  }
}

function worker(opts: { count: number; fetch: typeof fetch; options?: Partial<OutboxOptions> }) {
  const clock = createManualClock()
  const s = createStore(clock, opts.count)
  const logs: { level: string; msg: string; fields: Record<string, unknown> }[] = []
  const audited: string[] = []
  const log = (level: string) => (fields: object, msg?: string) =>
    logs.push({ level, msg: msg ?? '', fields: fields as Record<string, unknown> })
  const w = createOutboxWorker<OutboxRow>({
    label: 'test delivery',
    clock,
    logger: { warn: log('warn'), error: log('error') } as never,
    options: { ...OUTBOX_DEFAULTS, ...opts.options, fetch: opts.fetch },
    store: s.store,
    send: async (d, post) => ({ attempt: await post('https://rp.example/notify', { headers: {}, body: d.id }) }),
    onDelivered: (d, httpStatus) => audited.push(`${d.id} delivered ${httpStatus}`),
    onFailed: (d, error, httpStatus) => audited.push(`${d.id} failed ${error} ${httpStatus ?? '-'}`),
  })
  return { w, clock, logs, audited, ...s }
}

describe('outbox worker', () => {
  it('delivers on any 2xx and ends at once on an answer that cannot change by retrying', async () => {
    for (const [status, outcome] of [
      [200, 'delivered 200'],
      [204, 'delivered 204'],
      [400, 'failed http_status 400'],
      [302, 'failed http_status 302'],
      [404, 'failed http_status 404'],
    ] as const) {
      const t = worker({ count: 1, fetch: answering([status]) })
      expect(await t.w.runOnce()).toEqual({
        delivered: outcome.startsWith('delivered') ? 1 : 0,
        failed: outcome.startsWith('failed') ? 1 : 0,
        retrying: 0,
      })
      expect(t.audited).toEqual([`r0 ${outcome}`])
      expect(t.rows[0]!.attempts).toBe(1)
    }
  })

  it('retries a timeout, a refused connection, 408, 429 and 5xx after the back-off on the clock, then gives up', async () => {
    const t = worker({
      count: 1,
      fetch: answering(['timeout', 'refused', 408, 429, 503, 500]),
      options: { maxAttempts: 6, backoffMs: [1_000, 10_000, 60_000] },
    })
    const waits = [1, 10, 60, 60, 60]
    for (const seconds of waits) {
      expect(await t.w.runOnce()).toEqual({ delivered: 0, failed: 0, retrying: 1 })
      expect(await t.w.runOnce()).toEqual({ delivered: 0, failed: 0, retrying: 0 }) // not due yet
      t.clock.advance(seconds)
    }
    expect(await t.w.runOnce()).toEqual({ delivered: 0, failed: 1, retrying: 0 })
    expect(t.rows[0]!.history).toEqual([
      'retry:timeout@1000',
      'retry:connection_failed@10000',
      'retry:408@60000',
      'retry:429@60000',
      'retry:503@60000',
      'failed:500',
    ])
    expect(t.audited).toEqual(['r0 failed http_status 500'])
    expect(t.logs.filter((l) => l.msg === 'test delivery attempt failed; will retry').map((l) => l.fields.retry_in_seconds)).toEqual(waits)
  })

  it('records an attempt that throws as internal_error, to retry', async () => {
    const t = worker({ count: 1, fetch: answering([204]) })
    const w = createOutboxWorker<OutboxRow>({
      label: 'test delivery',
      clock: t.clock,
      logger: { warn: () => {}, error: () => {} } as never,
      options: OUTBOX_DEFAULTS,
      store: t.store,
      send: async () => {
        throw new Error('boom')
      },
      onDelivered: () => {},
      onFailed: () => {},
    })
    expect(await w.runOnce()).toEqual({ delivered: 0, failed: 0, retrying: 1 })
    expect(t.rows[0]!.history).toEqual(['retry:internal_error@5000'])
  })

  it('claims under the per-client bound: perClient, counting only attempts claimed within their timeout and its margin', async () => {
    const t = worker({ count: 0, fetch: answering([204]) })
    const asked: number[][] = []
    const w = createOutboxWorker<OutboxRow>({
      label: 'test delivery',
      clock: t.clock,
      logger: { warn: () => {}, error: () => {} } as never,
      options: { ...OUTBOX_DEFAULTS, perClient: 3, timeoutMs: 7_000 },
      store: { ...t.store, claimDue: async (...args) => (asked.push(args), []) },
      send: async () => ({ attempt: { kind: 'delivered', httpStatus: 204 } }),
      onDelivered: () => {},
      onFailed: () => {},
    })
    await w.runOnce()
    const now = t.clock.now()
    // now, the lease's end, batchSize, perClient, and since when a claim still counts (7 s + 5 s).
    expect(asked).toEqual([[now, now + 60_000, 20, 3, now - 12_000]])
  })

  it('claims a row as soon as an attempt ends, while another still runs', async () => {
    const pending: ((r: Response) => void)[] = []
    const hold: typeof fetch = () => new Promise<Response>((resolve) => pending.push(resolve))
    const t = worker({ count: 4, fetch: hold, options: { batchSize: 2 } })
    const run = t.w.runOnce()
    await until(() => pending.length === 2)
    pending[0]!(new Response(null, { status: 204 })) // the first attempt ends, the second still runs
    await until(() => t.audited.length === 1)
    await settle()
    expect(t.claims).toEqual([['r0', 'r1'], ['r2']])
    for (let i = 1; i < 4; i++) {
      await until(() => pending.length > i)
      pending[i]!(new Response(null, { status: 204 }))
      await settle()
    }
    expect(await run).toEqual({ delivered: 4, failed: 0, retrying: 0 })
    expect(t.claims).toEqual([['r0', 'r1'], ['r2'], ['r3'], [], []])
  })

  it('claims again when the attempts in flight ended while a claim that found their client busy was on its way', async () => {
    // The store counts the attempts in flight toward the per-client bound; if they all end during
    // that claim's round trip, it answers nothing although rows are due: the run must look again.
    const t = worker({ count: 3, fetch: answering([204]) })
    const held = new Map<string, (r: Response) => void>()
    const hold: typeof fetch = async (_uri, init) => new Promise<Response>((resolve) => held.set(init?.body as string, resolve))
    let calls = 0
    const w = createOutboxWorker<OutboxRow>({
      label: 'test delivery',
      clock: t.clock,
      logger: { warn: () => {}, error: () => {} } as never,
      options: { ...OUTBOX_DEFAULTS, fetch: hold },
      store: {
        ...t.store,
        async claimDue(now, leaseUntil, limit, perClient, inFlightSince) {
          calls++
          // The first claim takes two rows (the client's bound); the second finds r1 still in
          // flight, and r1 ends before its answer (nothing) arrives.
          if (calls === 1) return t.store.claimDue(now, leaseUntil, 2, perClient, inFlightSince)
          if (calls === 2) {
            held.get('r1')!(new Response(null, { status: 204 }))
            await until(() => t.rows[1]!.status === 'delivered')
            return []
          }
          return t.store.claimDue(now, leaseUntil, limit, perClient, inFlightSince)
        },
      },
      send: async (d, post) => ({ attempt: await post('https://rp.example/notify', { headers: {}, body: d.id }) }),
      onDelivered: () => {},
      onFailed: () => {},
    })
    const run = w.runOnce()
    await until(() => held.size === 2)
    held.get('r0')!(new Response(null, { status: 204 }))
    await until(() => held.size === 3)
    held.get('r2')!(new Response(null, { status: 204 }))
    expect(await run).toEqual({ delivered: 3, failed: 0, retrying: 0 })
    expect(t.rows.map((r) => r.status)).toEqual(['delivered', 'delivered', 'delivered'])
  })

  it('keeps an outcome the database did not take and saves it before claiming anything new', async () => {
    const t = worker({ count: 2, fetch: answering([204]), options: { batchSize: 1 } })
    t.outage.down = 2 // the receiver answered 204 just as the database went away, for two writes
    expect(await t.w.runOnce()).toEqual({ delivered: 0, failed: 0, retrying: 0 })
    expect(t.claims).toEqual([['r0']]) // nothing more was claimed while the outcome waited
    expect(await t.w.runOnce()).toEqual({ delivered: 2, failed: 0, retrying: 0 })
    expect(t.claims).toEqual([['r0'], ['r1'], []])
    expect(t.rows.map((r) => [r.attempts, r.history])).toEqual([
      [1, ['delivered:204']],
      [1, ['delivered:204']],
    ])
  })

  it('hands an attempt in flight back when stopped, not counted', async () => {
    const hold: typeof fetch = (_uri, init) =>
      new Promise<Response>((_resolve, reject) => {
        const signal = init?.signal
        if (signal) signal.addEventListener('abort', () => reject(signal.reason as Error))
      })
    const t = worker({ count: 1, fetch: hold })
    const run = t.w.runOnce()
    await until(() => t.rows[0]!.attempts === 1)
    await t.w.stop()
    expect(await run).toEqual({ delivered: 0, failed: 0, retrying: 0 })
    expect(t.rows[0]).toMatchObject({ status: 'pending', attempts: 0, history: ['released'] })
  })
})

/** A few turns of the event loop, for whatever the worker would do next. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r))
}

/** Lets the worker's promises run until `done` holds (a bounded number of turns, no timers). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !done(); i++) await new Promise<void>((r) => setImmediate(r))
  expect(done()).toBe(true)
}
