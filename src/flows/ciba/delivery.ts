// Delivers the outcome of ping and push requests (OpenID CIBA Core 1.0 §10.2, §10.3) from the
// outbox the decision wrote (src/stores/ciba-deliveries.postgres.ts), in the background, so the
// person's approval page never waits. Claims, retries and wake-up are the outbox kit's
// (src/jobs/outbox.ts), as for back-channel logout: each attempt is bounded (timeoutMs); any 2xx is
// delivered (§10.2: the client answers 204, or 200 as some frameworks do); a timeout, a refused
// connection, 408, 429 or a 5xx is retried after a back-off on the injected clock, up to
// maxAttempts; any other answer (a 4xx, a redirect, never followed) ends it at once. Outcomes are
// audited (ciba.delivered, ciba.delivery_failed), and so counted in the metrics.
//
// Replicas: rows are claimed under a lease, up to batchSize attempts at a time, and a row is
// claimed as soon as an attempt ends, so an endpoint that hangs until its timeout holds up only its
// own slot: the other clients' pings and pushes claimed with it or queued behind it go out through
// the others. The store's per-client bound (perClient attempts in flight for one client, on all
// replicas together) keeps one client's backlog due at once from filling every slot; it counts an
// attempt only for its timeout plus the kit's IN_FLIGHT_MARGIN_MS, so the leases a dead worker
// left hold up that client's other deliveries for no longer than that.
//
// Outages: an outcome the database could not take (the connection dropped just after the client
// answered) is kept and saved before anything new is claimed, so a ping or push the client
// accepted is not sent again when its lease runs out, and a push whose retries ran out, its tokens
// revoked, is recorded failed (revoking again, which changes nothing) rather than sent again with
// tokens already revoked. Only a worker that dies before saving leaves its rows to be sent again
// after the lease (see below).
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
import {
  createOutboxWorker,
  OUTBOX_DEFAULTS,
  type Attempt,
  type OutboxOptions,
  type OutboxWorker,
  type Post,
  type Sent,
} from '../../jobs/outbox.js'
import type { AuditSink } from '../../observe/audit.js'
import type { CibaDelivery, CibaDeliveryStore } from '../../stores/ciba-deliveries.js'
import type { CibaRequestStore } from '../../stores/ciba-requests.js'
import type { ClientStore } from '../../stores/clients.js'
import { ISSUED, type TokenResponse } from '../../tokens/issuer.js'
import { CIBA_GRANT, type createCibaIssue } from './grant.js'
import type { DeliverySecret, Sealer } from './sealed.js'

export type CibaDeliveryOptions = OutboxOptions

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

export type CibaDeliveryWorker = OutboxWorker

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
  const o: CibaDeliveryOptions = { ...OUTBOX_DEFAULTS, ...deps.options }
  const { clock, store, logger } = deps

  /** §10.2, §10.3: a JSON body with the client_notification_token as Bearer. */
  const notify = (post: Post, uri: string, token: string, body: Record<string, unknown>): Promise<Attempt> =>
    post(uri, { headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })

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

  /** One attempt; its note is what was sent (ping, tokens or an error code), for the audit. */
  async function send(d: CibaDelivery, post: Post): Promise<Sent<string>> {
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
      return { attempt: await notify(post, uri, secret.notificationToken, { auth_req_id: secret.authReqId }), note: 'ping' }
    }
    const pushed = await pushBody(d, client, secret.authReqId)
    if ('kind' in pushed) return { attempt: pushed }
    return { attempt: await notify(post, uri, secret.notificationToken, pushed.body), note: pushed.delivered }
  }

  /** Queues the notices of the requests that expired undecided, batchSize at a time. */
  async function queueExpired(stopping: AbortSignal): Promise<void> {
    let queued: number
    do {
      queued = await deps.requests.queueExpired(clock.now(), o.batchSize)
    } while (queued >= o.batchSize && !stopping.aborted) // a full batch: more may wait
  }

  const fields = (d: CibaDelivery, delivered: string | undefined) => ({
    clientId: d.clientId,
    cibaRequestId: d.requestId,
    deliveryMode: d.mode,
    attempts: d.attempts,
    delivered,
  })

  return createOutboxWorker<CibaDelivery, string>({
    label: 'CIBA delivery',
    clock,
    logger,
    options: o,
    store,
    send,
    onDelivered: (d, httpStatus, delivered) =>
      deps.audit.emit({ event: 'ciba.delivered', ...fields(d, delivered), grantType: CIBA_GRANT, httpStatus }),
    onFailed: (d, error, httpStatus, delivered) =>
      deps.audit.emit({ event: 'ciba.delivery_failed', ...fields(d, delivered), grantType: CIBA_GRANT, reason: error, httpStatus }),
    // Pushed tokens that never reached the client are revoked before their seal is erased.
    beforeFailing: async (d) => {
      if (d.mode === 'push') await deps.oneTimeUse.revokeFamily(d.familyId)
    },
    prepare: queueExpired,
    // The next undecided ping or push request to expire.
    nextEvent: () => deps.requests.nextExpiry(),
  })
}
