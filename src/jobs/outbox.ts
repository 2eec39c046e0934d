// The outbox kit of the background delivery workers (CIBA ping and push, src/flows/ciba/delivery.ts;
// back-channel logout, src/flows/logout/backchannel-logout.ts). A flow queues a row in an outbox
// table in the statement that makes it due, and a worker made here sends it in the background, so
// no page a person waits on ever waits for a receiver. The flow says what one attempt sends and
// what a recorded outcome audits; the mechanics they share are these.
//
// Claims: due rows are claimed under a lease (leaseMs, well above timeoutMs: the store's FOR UPDATE
// SKIP LOCKED claim), so no two workers (replicas) send one row at the same time, and a row whose
// worker died is claimed again once its lease ends: delivery is at least once. The store applies
// an outcome only while its claim is the row's latest (same attempt count), so a late save never
// overwrites another worker's attempt. Up to batchSize attempts run at a time, and a row is claimed
// as soon as one ends: an attempt that hangs until its timeout holds up only its own slot. At most
// perClient of them go to one client, on all replicas together (two replicas claiming at the same
// moment may each go up to it): a backlog for one client whose receiver hangs cannot fill every
// slot and hold up the other clients' rows. The store counts a claim against the bound only until
// its attempt has timed out (timeoutMs plus IN_FLIGHT_MARGIN_MS after the claim), wherever it ran,
// so a row still leased by a worker that died, or that could not save the outcome, holds up the
// client's other rows for the attempt's timeout, not the lease's length.
//
// Attempts: a POST bounded by timeoutMs, a redirect never followed (the URI is the one registered),
// the answer's body never read. Any 2xx is delivered. A timeout, a refused connection, 408, 429 or
// a 5xx is retried after a back-off counted on the injected clock (backoffMs, the last value
// repeating), up to maxAttempts; any other answer cannot change by retrying and ends the row at
// once. An attempt that throws (the database, a key) is a failed one to retry (internal_error).
// Delivered and failed rows are kept retentionMs for inspection, then removed by the cleanup task
// the flow registers; retries are logged, final outcomes audited by the flow.
//
// Wake-up: when any replica (or the CLI) queues a row (the store's NOTIFY), when the next retry is
// due, or the flow's next event (at least a second away: a row another replica's clock already
// finds due is not spun on), and every pollMs in case a notice was missed. Runs never overlap
// within a worker; wake-ups while one waits to start coalesce into it.
//
// Outages: an outcome the database could not take (the connection dropped, the server restarted)
// is kept and saved before anything new is claimed, looking again within SAVE_RETRY_MS, and
// nothing is claimed while the database does not take it, so a delivery the receiver accepted is
// not sent again when its lease runs out. Only a worker that dies before saving leaves its rows to
// be sent again after their lease.
//
// Stopping: an attempt in flight is cut short and handed back (release: not counted, due again at
// once) for another replica or the next start; kept outcomes get one last try.
import type { Logger } from 'pino'
import type { Clock } from '../domain/clock.js'
import { isUnavailable } from '../errors.js'

export interface OutboxOptions {
  /** Per attempt (ms). */
  timeoutMs: number
  /** Attempts in all, the first included. */
  maxAttempts: number
  /** Waits before the 2nd, 3rd… attempt (ms, on the injected clock); the last value repeats. */
  backoffMs: readonly number[]
  /** How long a claim holds a row (ms): well above timeoutMs, so only a crashed worker's rows are claimed again. */
  leaseMs: number
  /** Attempts in flight at a time, and so rows claimed at a time at most. */
  batchSize: number
  /** Attempts in flight for one client at a time, on all replicas together (each claims up to it). */
  perClient: number
  /** The longest sleep between looks at the outbox (ms, real time). */
  pollMs: number
  /** How long a finished row is kept for inspection (ms). */
  retentionMs: number
  fetch: typeof fetch
}

export const OUTBOX_DEFAULTS: OutboxOptions = {
  timeoutMs: 5000,
  maxAttempts: 5,
  // Frozen: every worker's options are a copy of this object, and they share the array.
  backoffMs: Object.freeze([5_000, 30_000, 120_000, 600_000]),
  leaseMs: 60_000,
  batchSize: 20,
  perClient: 5,
  pollMs: 30_000,
  retentionMs: 7 * 24 * 3600_000,
  fetch: (...args) => fetch(...args),
}

/** While outcomes wait to be saved, how soon the worker looks again (ms, real time). */
export const SAVE_RETRY_MS = 1_000

/** Beyond timeoutMs, how long a claimed attempt may still be running (reading the client, signing, saving). */
export const IN_FLIGHT_MARGIN_MS = 5_000

/** What the kit reads of a claimed row. */
export interface OutboxRow {
  id: string
  clientId: string
  /** Attempts so far, this one included. */
  attempts: number
}

/** How an attempt ended, as recorded. */
export interface OutboxAttemptRecord {
  /** ms */
  at: number
  /** A fixed word: timeout, connection_failed, http_status, … */
  error?: string | undefined
  httpStatus?: number | undefined
}

/** The outbox store's verbs the worker uses. */
export interface OutboxStore<D> {
  /**
   * Claims at most `limit` due rows not leased, leasing them until `leaseUntil` (ms), and no row of
   * a client that already has `perClient` attempts in flight: rows leased by claims made after
   * `inFlightSince` (ms; older attempts have timed out, wherever they ran, even if their lease
   * still holds).
   */
  claimDue(now: number, leaseUntil: number, limit: number, perClient: number, inFlightSince: number): Promise<D[]>
  /** Final outcome; false when the claim is no longer the row's latest. */
  finish(d: D, status: 'delivered' | 'failed', r: OutboxAttemptRecord & { expiresAt: number }): Promise<boolean>
  /** A failed attempt to be retried at `nextAttemptAt` (ms). */
  retry(d: D, nextAttemptAt: number, r: OutboxAttemptRecord): Promise<boolean>
  /** An attempt cut short by shutdown: not counted, due again at once. */
  release(d: D): Promise<boolean>
  /** When the next pending row is due (ms; a leased one when its lease ends), or undefined. */
  nextDue(): Promise<number | undefined>
  /** Calls `onQueued` when any replica (or the CLI) queues a row; resolves to an unsubscribe function. */
  subscribe(onQueued: () => void): Promise<() => Promise<void>>
}

export type Attempt =
  | { kind: 'delivered'; httpStatus: number }
  | { kind: 'failed'; retry: boolean; error: string; httpStatus?: number }
  | { kind: 'interrupted' }

/** What an attempt POSTs. */
export interface OutboxRequest {
  headers: Record<string, string>
  body: string
}

/** One bounded POST, its answer classified; cut short (interrupted) when the worker stops. */
export type Post = (uri: string, request: OutboxRequest) => Promise<Attempt>

/** What an attempt ended with, and a note the flow's audit takes along (CIBA: what was sent). */
export interface Sent<N> {
  attempt: Attempt
  note?: N | undefined
}

/** What one run did (tests and logs). */
export interface OutboxRun {
  delivered: number
  failed: number
  retrying: number
}

export interface OutboxWorker {
  /** Sends everything due now (waits for a run in progress first); runs never overlap within a worker. */
  runOnce(): Promise<OutboxRun>
  /** Listens for queued rows and looks at the outbox now and then. */
  start(): Promise<void>
  /** Stops: an attempt in flight is cut short and handed back (not counted), for another replica or the next start. */
  stop(): Promise<void>
}

export interface OutboxWorkerSpec<D extends OutboxRow, N> {
  /** Begins the worker's log lines: 'CIBA delivery', 'back-channel logout'. */
  label: string
  clock: Clock
  logger: Pick<Logger, 'warn' | 'error'>
  options: OutboxOptions
  store: OutboxStore<D>
  /** One attempt for a claimed row: what is sent, through `post`. Throwing is a failed attempt to retry. */
  send(d: D, post: Post): Promise<Sent<N>>
  /** A delivered outcome the store took: the flow's audit event. */
  onDelivered(d: D, httpStatus: number, note: N | undefined): void
  /** A final failure the store took: the flow's audit event. */
  onFailed(d: D, error: string, httpStatus: number | undefined, note: N | undefined): void
  /** Before a final failure is recorded (CIBA push: the tokens that never arrived are revoked). */
  beforeFailing?(d: D): Promise<void>
  /** More fields of the log line of a retry. */
  logFields?(d: D): Record<string, unknown>
  /** At the start of every run, before anything is claimed (CIBA: queueing the notices of expired requests). */
  prepare?(stopping: AbortSignal): Promise<void>
  /** Another time the worker must look, besides the next due row (CIBA: the next request to expire). */
  nextEvent?(): Promise<number | undefined>
}

/** An answer to an attempt: any 2xx is delivered; 408, 429 and a 5xx may change by retrying, nothing else does. */
export function classifyStatus(status: number): Attempt {
  if (status >= 200 && status < 300) return { kind: 'delivered', httpStatus: status }
  const retry = status >= 500 || status === 408 || status === 429
  return { kind: 'failed', retry, error: 'http_status', httpStatus: status }
}

/** The wait before the attempt after attempt number `attempts` (ms): the last value repeats. */
export function backoffWait(backoffMs: readonly number[], attempts: number): number {
  return backoffMs[Math.min(attempts - 1, backoffMs.length - 1)] ?? 0
}

/** An attempt's outcome to record, with its audit event or log line; counted in the run that records it. */
interface Outcome<D> {
  delivery: D
  record(run: OutboxRun): Promise<void>
}

const emptyRun = (): OutboxRun => ({ delivered: 0, failed: 0, retrying: 0 })

export function createOutboxWorker<D extends OutboxRow, N = never>(spec: OutboxWorkerSpec<D, N>): OutboxWorker {
  const { clock, store, logger, label, options: o } = spec
  const stopping = new AbortController()
  let tail: Promise<unknown> = Promise.resolve()
  let queuedRun: Promise<OutboxRun> | undefined
  let timer: NodeJS.Timeout | undefined
  let unlisten: (() => Promise<void>) | undefined
  let started = false
  /** Outcomes the database did not take: recorded before anything new is claimed. */
  const unsaved: Outcome<D>[] = []

  const post: Post = async (uri, request) => {
    try {
      const res = await o.fetch(uri, {
        method: 'POST',
        headers: request.headers,
        body: request.body,
        redirect: 'manual', // a redirect is an answer, never followed (the URI is the one registered)
        signal: AbortSignal.any([AbortSignal.timeout(o.timeoutMs), stopping.signal]),
      })
      await res.body?.cancel().catch(() => {}) // the body is never read, never logged
      return classifyStatus(res.status)
    } catch (err) {
      if (stopping.signal.aborted) return { kind: 'interrupted' }
      const timeout = err instanceof Error && err.name === 'TimeoutError'
      return { kind: 'failed', retry: true, error: timeout ? 'timeout' : 'connection_failed' }
    }
  }

  /** One attempt for one claimed row, and its outcome recorded. */
  async function attempt(d: D, run: OutboxRun): Promise<void> {
    let sent: Sent<N>
    try {
      sent = await spec.send(d, post)
    } catch (err) {
      // The client could not be read, a key not used: an attempt like any other failed one.
      if (!isUnavailable(err)) logger.error({ err, delivery_id: d.id, client_id: d.clientId }, `${label} attempt crashed`)
      sent = { attempt: { kind: 'failed', retry: true, error: 'internal_error' } }
    }
    await save(outcome(d, sent, clock.now()), run)
  }

  function outcome(d: D, sent: Sent<N>, now: number): Outcome<D> {
    const result = sent.attempt
    const record = async (run: OutboxRun) => {
      if (result.kind === 'interrupted') {
        await store.release(d)
      } else if (result.kind === 'delivered') {
        if (await store.finish(d, 'delivered', { at: now, expiresAt: now + o.retentionMs, httpStatus: result.httpStatus })) {
          run.delivered++
          spec.onDelivered(d, result.httpStatus, sent.note)
        }
      } else if (result.retry && d.attempts < o.maxAttempts) {
        const wait = backoffWait(o.backoffMs, d.attempts)
        if (await store.retry(d, now + wait, { at: now, error: result.error, httpStatus: result.httpStatus })) {
          run.retrying++
          logger.warn(
            {
              delivery_id: d.id,
              client_id: d.clientId,
              ...spec.logFields?.(d),
              attempt: d.attempts,
              error: result.error,
              http_status: result.httpStatus,
              retry_in_seconds: wait / 1000,
            },
            `${label} attempt failed; will retry`,
          )
        }
      } else {
        await spec.beforeFailing?.(d)
        if (
          await store.finish(d, 'failed', { at: now, error: result.error, httpStatus: result.httpStatus, expiresAt: now + o.retentionMs })
        ) {
          run.failed++
          spec.onFailed(d, result.error, result.httpStatus, sent.note)
        }
      }
    }
    return { delivery: d, record }
  }

  /**
   * Records an outcome; false when the database is away and the outcome is kept for later. Any
   * other failure is logged at error level, and the row is sent again once its lease runs out.
   */
  async function save(out: Outcome<D>, run: OutboxRun): Promise<boolean> {
    try {
      await out.record(run)
    } catch (err) {
      if (isUnavailable(err)) {
        unsaved.push(out)
        return false
      }
      logger.error({ err, delivery_id: out.delivery.id, client_id: out.delivery.clientId }, `${label} outcome not recorded`)
    }
    return true
  }

  /** Records the kept outcomes; false when the database is still away. */
  async function flush(run: OutboxRun): Promise<boolean> {
    for (let out = unsaved.shift(); out; out = unsaved.shift()) if (!(await save(out, run))) return false
    return true
  }

  /**
   * Claims and sends until nothing is due, up to batchSize attempts in flight, a row claimed as
   * soon as one ends. Kept outcomes are recorded first; while the database does not take them,
   * nothing new is claimed (its outcome could not be recorded either).
   */
  async function drain(): Promise<OutboxRun> {
    const run = emptyRun()
    await spec.prepare?.(stopping.signal)
    const inFlight = new Set<Promise<void>>()
    let ended = 0 // attempts of this run that have ended
    for (;;) {
      const free = o.batchSize - inFlight.size
      const saved = await flush(run)
      let endedBeforeClaim: number | undefined
      if (!stopping.signal.aborted && free > 0 && saved) {
        endedBeforeClaim = ended
        const now = clock.now()
        let claimed: D[]
        try {
          claimed = await store.claimDue(now, now + o.leaseMs, free, o.perClient, now - o.timeoutMs - IN_FLIGHT_MARGIN_MS)
        } catch (err) {
          await Promise.all(inFlight) // runs never overlap: the attempts in flight end first
          throw err
        }
        for (const d of claimed) {
          const p: Promise<void> = attempt(d, run)
            .catch((err: unknown) => logger.error({ err, delivery_id: d.id, client_id: d.clientId }, `${label} attempt crashed`))
            .finally(() => {
              inFlight.delete(p)
              ended++
            })
          inFlight.add(p)
        }
      }
      if (inFlight.size === 0) {
        // An attempt that ended while the claim was on its way still counted toward its client's
        // bound there, so that claim's nothing does not mean nothing is due: look again.
        if (endedBeforeClaim !== undefined && ended !== endedBeforeClaim) continue
        return run // nothing due (or stopping) and nothing in flight
      }
      await Promise.race(inFlight)
    }
  }

  function runOnce(): Promise<OutboxRun> {
    const run = tail.then(drain, drain)
    tail = run.catch(() => {})
    return run
  }

  /** A run soon; requests while one is waiting to start coalesce into it. */
  function wake() {
    if (!started || stopping.signal.aborted || queuedRun) return
    const run = (queuedRun = tail.then(() => {
      queuedRun = undefined
      return drain()
    }))
    tail = run
      .catch((err: unknown) => {
        if (!isUnavailable(err)) logger.warn({ err }, `${label} run failed; will retry`) // an outage is logged once elsewhere
      })
      .then(schedule)
  }

  /** The next look: when the next retry (or the flow's next event) is due, at most pollMs away. */
  async function schedule() {
    if (stopping.signal.aborted) return
    let delay = o.pollMs
    try {
      const times = (await Promise.all([store.nextDue(), spec.nextEvent?.()])).filter((t) => t !== undefined)
      const due = times.length > 0 ? Math.min(...times) : undefined
      // At least a second: a row another replica's clock already finds due is not spun on.
      if (due !== undefined) delay = Math.min(o.pollMs, Math.max(1000, due - clock.now()))
    } catch {
      // The database is away: look again after pollMs (or sooner, below).
    }
    // Outcomes to record: soon, so that they are saved before their leases run out.
    if (unsaved.length > 0) delay = Math.min(delay, SAVE_RETRY_MS)
    if (stopping.signal.aborted) return
    if (timer) clearTimeout(timer)
    timer = setTimeout(wake, delay)
    timer.unref()
  }

  return {
    runOnce,
    async start() {
      if (started) return
      started = true
      unlisten = await store.subscribe(wake)
      wake() // rows left by an earlier run, a stopped replica or the CLI
    },
    async stop() {
      stopping.abort()
      if (timer) clearTimeout(timer)
      await unlisten?.().catch(() => {})
      await tail
      await flush(emptyRun()) // one last try; what stays unsaved is sent again after its lease
    },
  }
}
