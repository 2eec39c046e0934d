// Sends the logout tokens of OpenID Connect Back-Channel Logout 1.0 (§2.5): when a sign-in session
// ends, every client used in it that registered a backChannelLogoutUri gets a POST of
// `logout_token=<JWT>` (application/x-www-form-urlencoded). The session's end queued them in the
// database (the outbox, src/stores/backchannel-logouts.postgres.ts) in the statement that ended
// it; this worker sends them in the background, so the person's sign-out page never waits.
//
// Delivery: each attempt is bounded (timeoutMs) and signs a fresh token. §2.8: the RP answers 200
// on success (204 is accepted too, as some frameworks send it; any 2xx counts). A timeout, a
// refused connection, 408, 429 or a 5xx is retried after a back-off counted on the injected clock,
// up to maxAttempts; any other answer (400: the RP rejected the token; a redirect, which is never
// followed) cannot change by retrying and ends the delivery at once. The final outcome is recorded
// on the row and written as an audit event (logout.delivered, logout.failed); retries are logged.
// The token itself never reaches a log, the database or an error message.
//
// Replicas: rows are claimed under a lease (the store's FOR UPDATE SKIP LOCKED claim), so no two
// workers send one row at the same time. A worker wakes when any replica queues logouts (NOTIFY),
// when its next retry is due, and every pollMs in case a notice was missed.
//
// Outages: an outcome the database could not take (the connection dropped, the server restarted)
// is kept and saved before anything new is claimed, once the database answers again, so a logout
// the receiver accepted is not sent again when its lease runs out. Only a worker that dies before
// saving leaves its rows to be sent again after the lease: delivery is at least once, and a
// receiver de-duplicates by sid (each attempt signs a new jti). The per-client bound counts an
// attempt only for its timeout plus IN_FLIGHT_MARGIN_MS, so such leftover leases never hold up the
// client's other logouts for the lease's length.
import type { Logger } from 'pino'
import type { Clock } from '../../domain/clock.js'
import { isUnavailable } from '../../errors.js'
import type { AuditSink } from '../../observe/audit.js'
import type { BackchannelLogoutStore, LogoutDelivery } from '../../stores/backchannel-logouts.js'
import type { ClientStore } from '../../stores/clients.js'
import { signLogoutToken } from './logout-token.js'
import type { SigningKeyService } from '../../keys/signing-keys.js'

export interface BackchannelLogoutOptions {
  /** Per attempt (ms). */
  timeoutMs: number
  /** Attempts in all, the first included. */
  maxAttempts: number
  /** Waits before the 2nd, 3rd… attempt (ms, on the injected clock); the last value repeats. */
  backoffMs: number[]
  /** How long a claim holds a row (ms): well above timeoutMs, so only a crashed worker's rows are claimed again. */
  leaseMs: number
  /** Attempts in flight at a time (a new row is claimed as soon as one ends). */
  batchSize: number
  /** Attempts in flight for one client at a time, on all replicas together (each claims up to it). */
  perClient: number
  /** The longest sleep between looks at the outbox (ms, real time). */
  pollMs: number
  /** How long a finished row is kept for inspection (ms). */
  retentionMs: number
  fetch: typeof fetch
}

export const BACKCHANNEL_LOGOUT_DEFAULTS: BackchannelLogoutOptions = {
  timeoutMs: 5000,
  maxAttempts: 5,
  backoffMs: [5_000, 30_000, 120_000, 600_000],
  leaseMs: 60_000,
  batchSize: 20,
  perClient: 5,
  pollMs: 30_000,
  retentionMs: 7 * 24 * 3600_000,
  fetch: (...args) => fetch(...args),
}

/** Beyond timeoutMs, how long a claimed attempt may still be running (reading the client, signing, saving). */
export const IN_FLIGHT_MARGIN_MS = 5_000
/** While outcomes wait to be saved, how soon the worker looks again (ms, real time). */
const SAVE_RETRY_MS = 1_000

export interface BackchannelLogoutDeps {
  issuer: string
  clock: Clock
  store: BackchannelLogoutStore
  clients: Pick<ClientStore, 'findById'>
  keys: Pick<SigningKeyService, 'sign'>
  logger: Pick<Logger, 'info' | 'warn' | 'error'>
  audit: AuditSink
  options?: Partial<BackchannelLogoutOptions>
}

/** What one run did (tests and logs). */
export interface LogoutRun {
  delivered: number
  failed: number
  retrying: number
}

type Attempt =
  | { kind: 'delivered'; httpStatus: number }
  | { kind: 'failed'; retry: boolean; error: string; httpStatus?: number }
  | { kind: 'interrupted' }

/** An attempt's outcome to record, with its audit event or log line; counted in the run that records it. */
interface Outcome {
  delivery: LogoutDelivery
  record(run: LogoutRun): Promise<void>
}

export interface BackchannelLogoutWorker {
  /** Sends everything due now (waits for a run in progress first); runs never overlap within a worker. */
  runOnce(): Promise<LogoutRun>
  /** Listens for queued logouts and looks at the outbox now and then. */
  start(): Promise<void>
  /** Stops: an attempt in flight is cut short and handed back (not counted), for another replica or the next start. */
  stop(): Promise<void>
}

export function createBackchannelLogoutWorker(deps: BackchannelLogoutDeps): BackchannelLogoutWorker {
  const o: BackchannelLogoutOptions = { ...BACKCHANNEL_LOGOUT_DEFAULTS, ...deps.options }
  const { clock, store, logger } = deps
  const stopping = new AbortController()
  let tail: Promise<unknown> = Promise.resolve()
  let queuedRun: Promise<LogoutRun> | undefined
  let timer: NodeJS.Timeout | undefined
  let unlisten: (() => Promise<void>) | undefined
  let started = false
  /** Outcomes the database did not take: recorded before anything new is claimed. */
  const unsaved: Outcome[] = []

  async function post(uri: string, token: string): Promise<Attempt> {
    try {
      const res = await o.fetch(uri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ logout_token: token }).toString(),
        redirect: 'manual', // a redirect is an answer, never followed (the URI is the one registered)
        signal: AbortSignal.any([AbortSignal.timeout(o.timeoutMs), stopping.signal]),
      })
      await res.body?.cancel().catch(() => {}) // the body is never read, never logged
      if (res.status >= 200 && res.status < 300) return { kind: 'delivered', httpStatus: res.status }
      const retry = res.status >= 500 || res.status === 408 || res.status === 429
      return { kind: 'failed', retry, error: 'http_status', httpStatus: res.status }
    } catch (err) {
      if (stopping.signal.aborted) return { kind: 'interrupted' }
      const timeout = err instanceof Error && err.name === 'TimeoutError'
      return { kind: 'failed', retry: true, error: timeout ? 'timeout' : 'connection_failed' }
    }
  }

  async function send(d: LogoutDelivery): Promise<Attempt> {
    const client = await deps.clients.findById(d.clientId)
    const uri = client?.backChannelLogoutUri
    if (!client || !uri) return { kind: 'failed', retry: false, error: 'client_gone' }
    // A disabled client is refused everything, this too: it may be shut off for being compromised,
    // and a token naming a user's session is not signed for it (the row ends, audited).
    if (!client.enabled) return { kind: 'failed', retry: false, error: 'client_disabled' }
    if (client.backChannelLogoutSessionRequired && d.sid === undefined) return { kind: 'failed', retry: false, error: 'sid_required' }
    const token = await signLogoutToken(deps.keys, {
      issuer: deps.issuer,
      clientId: d.clientId,
      subjectId: d.subjectId,
      sid: d.sid,
      now: clock.now(),
    })
    return post(uri, token)
  }

  /** One attempt for one claimed row, and its outcome recorded. */
  async function attempt(d: LogoutDelivery, run: LogoutRun): Promise<void> {
    let result: Attempt
    try {
      result = await send(d)
    } catch (err) {
      // The client could not be read or the token not signed: an attempt like any other failed one.
      if (!isUnavailable(err)) logger.error({ err, delivery_id: d.id, client_id: d.clientId }, 'back-channel logout attempt crashed')
      result = { kind: 'failed', retry: true, error: 'internal_error' }
    }
    await save(outcome(d, result, clock.now()), run)
  }

  function outcome(d: LogoutDelivery, result: Attempt, now: number): Outcome {
    const fields = { clientId: d.clientId, subject: d.subjectId, sid: d.sid, attempts: d.attempts, sessionEnd: d.reason }
    const record = async (run: LogoutRun) => {
      if (result.kind === 'interrupted') {
        await store.release(d)
      } else if (result.kind === 'delivered') {
        if (await store.finish(d, 'delivered', { at: now, expiresAt: now + o.retentionMs, httpStatus: result.httpStatus })) {
          run.delivered++
          deps.audit.emit({ event: 'logout.delivered', ...fields, httpStatus: result.httpStatus })
        }
      } else if (result.retry && d.attempts < o.maxAttempts) {
        const wait = o.backoffMs[Math.min(d.attempts - 1, o.backoffMs.length - 1)] ?? 0
        if (await store.retry(d, now + wait, { at: now, error: result.error, httpStatus: result.httpStatus })) {
          run.retrying++
          logger.warn(
            {
              delivery_id: d.id,
              client_id: d.clientId,
              sid: d.sid,
              attempt: d.attempts,
              error: result.error,
              http_status: result.httpStatus,
              retry_in_seconds: wait / 1000,
            },
            'back-channel logout attempt failed; will retry',
          )
        }
      } else if (
        await store.finish(d, 'failed', { at: now, error: result.error, httpStatus: result.httpStatus, expiresAt: now + o.retentionMs })
      ) {
        run.failed++
        deps.audit.emit({ event: 'logout.failed', ...fields, reason: result.error, httpStatus: result.httpStatus })
      }
    }
    return { delivery: d, record }
  }

  /**
   * Records an outcome; false when the database is away, and then it is kept for later. The
   * store applies it only while this claim is the row's latest, so a late save never overwrites
   * another worker's attempt. Any other failure is logged and the row's lease runs out.
   */
  async function save(out: Outcome, run: LogoutRun): Promise<boolean> {
    try {
      await out.record(run)
    } catch (err) {
      if (isUnavailable(err)) {
        unsaved.push(out)
        return false
      }
      logger.error({ err, delivery_id: out.delivery.id, client_id: out.delivery.clientId }, 'back-channel logout outcome not recorded')
    }
    return true
  }

  /** Records the kept outcomes; false when the database is still away. */
  async function flush(run: LogoutRun): Promise<boolean> {
    for (let out = unsaved.shift(); out; out = unsaved.shift()) if (!(await save(out, run))) return false
    return true
  }

  /**
   * Claims and sends until nothing is due. Up to batchSize attempts are in flight, and a row is
   * claimed as soon as one ends: an attempt that hangs until its timeout holds up only its own
   * slot, never the rows claimed with it (and the store's per-client bound keeps one client's
   * backlog from filling every slot). Kept outcomes are recorded first; while the database does
   * not take them, nothing new is claimed (its outcome could not be recorded either).
   */
  async function drain(): Promise<LogoutRun> {
    const run: LogoutRun = { delivered: 0, failed: 0, retrying: 0 }
    const inFlight = new Set<Promise<void>>()
    for (;;) {
      const free = o.batchSize - inFlight.size
      const saved = await flush(run)
      if (!stopping.signal.aborted && free > 0 && saved) {
        const now = clock.now()
        let claimed: LogoutDelivery[]
        try {
          claimed = await store.claimDue(now, now + o.leaseMs, free, o.perClient, now - o.timeoutMs - IN_FLIGHT_MARGIN_MS)
        } catch (err) {
          await Promise.all(inFlight) // runs never overlap: the attempts in flight end first
          throw err
        }
        for (const d of claimed) {
          const p: Promise<void> = attempt(d, run)
            .catch((err: unknown) => logger.error({ err, delivery_id: d.id, client_id: d.clientId }, 'back-channel logout attempt crashed'))
            .finally(() => inFlight.delete(p))
          inFlight.add(p)
        }
      }
      if (inFlight.size === 0) return run // nothing due (or stopping) and nothing in flight
      await Promise.race(inFlight)
    }
  }

  function runOnce(): Promise<LogoutRun> {
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
        if (!isUnavailable(err)) logger.warn({ err }, 'back-channel logout run failed; will retry') // an outage is logged once elsewhere
      })
      .then(schedule)
  }

  /** The next look: when the next retry is due, at most pollMs away. */
  async function schedule() {
    if (stopping.signal.aborted) return
    let delay = o.pollMs
    try {
      const due = await store.nextDue()
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
      await flush({ delivered: 0, failed: 0, retrying: 0 }) // one last try; what stays unsaved is sent again after its lease
    },
  }
}
