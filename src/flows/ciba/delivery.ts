// Delivers the outcome of ping and push requests (OpenID CIBA Core 1.0 §10.2, §10.3) from the
// outbox the decision wrote (src/stores/ciba-deliveries.postgres.ts), in the background, so the
// person's approval page never waits. The design of back-channel logout
// (src/flows/logout/backchannel-logout.ts): each attempt is bounded (timeoutMs); any 2xx is
// delivered (§10.2: the client answers 204, or 200 as some frameworks do); a timeout, a refused
// connection, 408, 429 or a 5xx is retried after a back-off on the injected clock, up to
// maxAttempts; any other answer (a 4xx, a redirect, never followed) ends it at once. Outcomes are
// audited (ciba.delivered, ciba.delivery_failed), and so counted in the metrics.
//
// Ping (§10.2): POST {"auth_req_id"} with the client_notification_token as Bearer; the client then
// redeems at the token endpoint as in poll mode.
//
// Push (§10.3): the worker's first attempt consumes the approved request (single use, as a
// redemption at the token endpoint would) and issues the tokens into the request's grant family,
// with §10.3.1's claims in the ID token; the body is sealed into the row before it is POSTed, so
// that a retry sends the same tokens. A denied request pushes access_denied, one that expired
// before it could be issued expired_token (§12).
//
// Expiry (§12 "expired_token … OpenID Providers are not required to send this error, but Clients
// SHOULD support receiving this error"; §10.2 "after a successful or failed end-user
// authentication"): a ping or push request that expires undecided is queued into the same outbox
// by the worker (CibaRequestStore.queueExpired, once per request), so the client stops waiting:
// push is sent expired_token, ping is pinged and its token request answered expired_token (§11).
// Retries, sealing and audit are those of any delivery. Queueing it takes the request's sealed
// secret, so it can no longer be decided, nor notified a second time.
//
// A crash between issuing and delivering: the row stays leased, and the next attempt after the
// lease either finds the sealed body (it is sent again: delivery is at least once, and the client
// de-duplicates by auth_req_id), or finds the request consumed without a body (the tokens were
// issued, or about to be, and never saved): then the family is revoked, so no token exists that
// the client never received, and transaction_failed is pushed, after which the client starts a new
// request. When the retries end without delivery the family is revoked too. Either way the
// sealed tokens leave the row as soon as it is finished.
import type { Logger } from 'pino'
import type { Clock } from '../../domain/clock.js'
import type { Client } from '../../domain/types.js'
import { isUnavailable } from '../../errors.js'
import type { OneTimeUse } from '../../grants/one-time-use.js'
import type { AuditSink } from '../../observe/audit.js'
import type { CibaDelivery, CibaDeliveryStore } from '../../stores/ciba-deliveries.js'
import type { CibaRequestStore } from '../../stores/ciba-requests.js'
import type { ClientStore } from '../../stores/clients.js'
import { ISSUED, type TokenResponse } from '../../tokens/issuer.js'
import { CIBA_GRANT, type createCibaIssue } from './grant.js'
import type { DeliverySecret, Sealer } from './sealed.js'

export interface CibaDeliveryOptions {
  /** Per attempt (ms). */
  timeoutMs: number
  /** Attempts in all, the first included. */
  maxAttempts: number
  /** Waits before the 2nd, 3rd… attempt (ms, on the injected clock); the last value repeats. */
  backoffMs: number[]
  /** How long a claim holds a row (ms): well above timeoutMs, so only a crashed worker's rows are claimed again. */
  leaseMs: number
  /** Rows claimed at a time. */
  batchSize: number
  /** The longest sleep between looks at the outbox (ms, real time). */
  pollMs: number
  /** How long a finished row is kept for inspection (ms). */
  retentionMs: number
  fetch: typeof fetch
}

export const CIBA_DELIVERY_DEFAULTS: CibaDeliveryOptions = {
  timeoutMs: 5000,
  maxAttempts: 5,
  backoffMs: [5_000, 30_000, 120_000, 600_000],
  leaseMs: 60_000,
  batchSize: 20,
  pollMs: 30_000,
  retentionMs: 7 * 24 * 3600_000,
  fetch: (...args) => fetch(...args),
}

export const CIBA_DELIVERY_WORKER = 'ciba-delivery'

export interface CibaDeliveryDeps {
  clock: Clock
  store: CibaDeliveryStore
  requests: Pick<CibaRequestStore, 'findById' | 'consume' | 'queueExpired' | 'nextExpiry'>
  clients: Pick<ClientStore, 'findById'>
  issue: ReturnType<typeof createCibaIssue>
  oneTimeUse: Pick<OneTimeUse, 'revokeFamily'>
  sealer: Sealer
  logger: Pick<Logger, 'info' | 'warn' | 'error'>
  audit: AuditSink
  options?: Partial<CibaDeliveryOptions> | undefined
}

/** What one run did (tests and logs). */
export interface DeliveryRun {
  delivered: number
  failed: number
  retrying: number
}

export interface CibaDeliveryWorker {
  /** Sends everything due now (waits for a run in progress first); runs never overlap within a worker. */
  runOnce(): Promise<DeliveryRun>
  start(): Promise<void>
  stop(): Promise<void>
}

type Attempt =
  | { kind: 'delivered'; httpStatus: number }
  | { kind: 'failed'; retry: boolean; error: string; httpStatus?: number }
  | { kind: 'interrupted' }

/** A push body: the token response (§10.3.1) or the error (§12), and which of them it is. */
interface Pushed {
  body: Record<string, unknown>
  delivered: string
}

const ERRORS = {
  access_denied: 'the user denied the request',
  expired_token: 'the request expired before its tokens were issued',
  transaction_failed: 'the tokens could not be delivered; start a new request',
} as const

export function createCibaDeliveryWorker(deps: CibaDeliveryDeps): CibaDeliveryWorker {
  const o: CibaDeliveryOptions = { ...CIBA_DELIVERY_DEFAULTS, ...deps.options }
  const { clock, store, logger } = deps
  const stopping = new AbortController()
  let tail: Promise<unknown> = Promise.resolve()
  let queuedRun: Promise<DeliveryRun> | undefined
  let timer: NodeJS.Timeout | undefined
  let unlisten: (() => Promise<void>) | undefined
  let started = false

  async function post(uri: string, token: string, body: Record<string, unknown>): Promise<Attempt> {
    try {
      const res = await o.fetch(uri, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        redirect: 'manual', // a redirect is an answer, never followed (the endpoint is the one registered)
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

  const error = (authReqId: string, code: keyof typeof ERRORS): Pushed => ({
    body: { auth_req_id: authReqId, error: code, error_description: ERRORS[code] },
    delivered: code,
  })

  /** The push body: kept from an earlier attempt, or made now (the tokens issued once). */
  async function pushBody(d: CibaDelivery, client: Client, authReqId: string): Promise<Pushed | Attempt> {
    if (d.payload !== undefined) return deps.sealer.open<Pushed>(d.payload, d.requestId, 'payload')
    const req = await deps.requests.findById(d.requestId)
    if (!req) return error(authReqId, 'expired_token')
    if (req.status === 'denied') return error(authReqId, 'access_denied')
    const now = clock.now()
    const consumed = await deps.requests.consume(req.id, now)
    if (!consumed) {
      if (req.consumedAt === undefined && req.expiresAt <= now) return error(authReqId, 'expired_token')
      // Consumed by an attempt that never saved what it issued: nothing it issued may live on.
      await deps.oneTimeUse.revokeFamily(d.familyId)
      return error(authReqId, 'transaction_failed')
    }
    let tokens: TokenResponse
    try {
      tokens = await deps.issue(client, consumed, { cibaPush: { authReqId } })
    } catch (err) {
      if (isUnavailable(err)) throw err
      logger.warn({ err, delivery_id: d.id, client_id: d.clientId }, 'CIBA push: tokens not issued')
      await deps.oneTimeUse.revokeFamily(d.familyId)
      return error(authReqId, 'transaction_failed')
    }
    deps.audit.emit({
      event: 'token.issued',
      clientId: client.clientId,
      subject: tokens[ISSUED]?.subject,
      grantType: CIBA_GRANT,
      scope: tokens.scope,
      tokenTypes: ['access_token', ...(tokens.id_token ? ['id_token'] : []), ...(tokens.refresh_token ? ['refresh_token'] : [])],
      accessTokenFormat: tokens[ISSUED]?.accessTokenFormat,
    })
    // §10.3.1: the token response's members and the auth_req_id it answers.
    const body: Record<string, unknown> = {
      auth_req_id: authReqId,
      access_token: tokens.access_token,
      token_type: tokens.token_type,
      expires_in: tokens.expires_in,
      ...(tokens.refresh_token ? { refresh_token: tokens.refresh_token } : {}),
      ...(tokens.id_token ? { id_token: tokens.id_token } : {}),
    }
    const pushed = { body, delivered: 'tokens' }
    if (!(await store.savePayload(d, deps.sealer.seal(pushed, d.requestId, 'payload')))) {
      // Another worker holds the row now: what was issued here is never sent, so it must not live.
      await deps.oneTimeUse.revokeFamily(d.familyId)
      return { kind: 'failed', retry: true, error: 'claim_lost' }
    }
    return pushed
  }

  async function send(d: CibaDelivery): Promise<{ attempt: Attempt; delivered?: string }> {
    const client = await deps.clients.findById(d.clientId)
    const uri = client?.backchannelClientNotificationEndpoint
    if (!client) return { attempt: { kind: 'failed', retry: false, error: 'client_gone' } }
    // A disabled client is refused everything, this too: it may be shut off for being compromised.
    if (!client.enabled) return { attempt: { kind: 'failed', retry: false, error: 'client_disabled' } }
    if (!uri) return { attempt: { kind: 'failed', retry: false, error: 'no_endpoint' } }
    let secret: DeliverySecret
    try {
      secret = deps.sealer.open<DeliverySecret>(d.secret ?? '', d.requestId, 'secret')
    } catch (err) {
      logger.error({ err, delivery_id: d.id, client_id: d.clientId }, 'CIBA delivery secret cannot be opened')
      return { attempt: { kind: 'failed', retry: false, error: 'secret_unavailable' } }
    }
    if (d.mode === 'ping') {
      return { attempt: await post(uri, secret.notificationToken, { auth_req_id: secret.authReqId }), delivered: 'ping' }
    }
    const pushed = await pushBody(d, client, secret.authReqId)
    if ('kind' in pushed) return { attempt: pushed }
    return { attempt: await post(uri, secret.notificationToken, pushed.body), delivered: pushed.delivered }
  }

  async function attempt(d: CibaDelivery, run: DeliveryRun): Promise<void> {
    let result: { attempt: Attempt; delivered?: string }
    try {
      result = await send(d)
    } catch (err) {
      if (!isUnavailable(err)) logger.error({ err, delivery_id: d.id, client_id: d.clientId }, 'CIBA delivery attempt crashed')
      result = { attempt: { kind: 'failed', retry: true, error: 'internal_error' } }
    }
    try {
      await record(d, result.attempt, result.delivered, run)
    } catch (err) {
      // The lease runs out and the row is tried again (a pushed body is sent again, the same one).
      logger.error({ err, delivery_id: d.id, client_id: d.clientId }, 'CIBA delivery outcome not recorded')
    }
  }

  async function record(d: CibaDelivery, a: Attempt, delivered: string | undefined, run: DeliveryRun): Promise<void> {
    const now = clock.now()
    const fields = { clientId: d.clientId, cibaRequestId: d.requestId, deliveryMode: d.mode, attempts: d.attempts, delivered }
    if (a.kind === 'interrupted') {
      await store.release(d)
    } else if (a.kind === 'delivered') {
      if (await store.finish(d, 'delivered', { at: now, expiresAt: now + o.retentionMs, httpStatus: a.httpStatus })) {
        run.delivered++
        deps.audit.emit({ event: 'ciba.delivered', ...fields, grantType: CIBA_GRANT, httpStatus: a.httpStatus })
      }
    } else if (a.retry && d.attempts < o.maxAttempts) {
      const wait = o.backoffMs[Math.min(d.attempts - 1, o.backoffMs.length - 1)] ?? 0
      if (await store.retry(d, now + wait, { at: now, error: a.error, httpStatus: a.httpStatus })) {
        run.retrying++
        logger.warn(
          {
            delivery_id: d.id,
            client_id: d.clientId,
            attempt: d.attempts,
            error: a.error,
            http_status: a.httpStatus,
            retry_in_seconds: wait / 1000,
          },
          'CIBA delivery attempt failed; will retry',
        )
      }
    } else {
      // Pushed tokens that never reached the client are revoked before their seal is erased.
      if (d.mode === 'push') await deps.oneTimeUse.revokeFamily(d.familyId)
      if (await store.finish(d, 'failed', { at: now, error: a.error, httpStatus: a.httpStatus, expiresAt: now + o.retentionMs })) {
        run.failed++
        deps.audit.emit({ event: 'ciba.delivery_failed', ...fields, grantType: CIBA_GRANT, reason: a.error, httpStatus: a.httpStatus })
      }
    }
  }

  /** Queues the notices of the requests that expired undecided, batchSize at a time. */
  async function queueExpired(): Promise<void> {
    let queued: number
    do {
      queued = await deps.requests.queueExpired(clock.now(), o.batchSize)
    } while (queued >= o.batchSize && !stopping.signal.aborted) // a full batch: more may wait
  }

  /** Claims and sends until nothing is due, batchSize attempts at a time. */
  async function drain(): Promise<DeliveryRun> {
    const run: DeliveryRun = { delivered: 0, failed: 0, retrying: 0 }
    await queueExpired()
    while (!stopping.signal.aborted) {
      const now = clock.now()
      const claimed = await store.claimDue(now, now + o.leaseMs, o.batchSize)
      if (claimed.length === 0) break
      await Promise.all(claimed.map((d) => attempt(d, run)))
    }
    return run
  }

  function runOnce(): Promise<DeliveryRun> {
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
        if (!isUnavailable(err)) logger.warn({ err }, 'CIBA delivery run failed; will retry')
      })
      .then(schedule)
  }

  /** The next look: when the next retry is due, at most pollMs away. */
  async function schedule() {
    if (stopping.signal.aborted) return
    let delay = o.pollMs
    try {
      // The next retry due, or the next undecided ping or push request to expire.
      const times = (await Promise.all([store.nextDue(), deps.requests.nextExpiry()])).filter((t) => t !== undefined)
      const due = times.length > 0 ? Math.min(...times) : undefined
      // At least a second: a row another replica's clock already finds due is not spun on.
      if (due !== undefined) delay = Math.min(o.pollMs, Math.max(1000, due - clock.now()))
    } catch {
      // The database is away: look again after pollMs.
    }
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
    },
  }
}
