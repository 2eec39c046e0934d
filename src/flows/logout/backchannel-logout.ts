// Sends the logout tokens of OpenID Connect Back-Channel Logout 1.0 (§2.5): when a sign-in session
// ends, every client used in it that registered a backChannelLogoutUri gets a POST of
// `logout_token=<JWT>` (application/x-www-form-urlencoded). The session's end queued them in the
// database (the outbox, src/stores/backchannel-logouts.postgres.ts) in the statement that ended
// it; this worker sends them in the background, so the person's sign-out page never waits. Claims,
// retries, wake-up and outages are the outbox kit's (src/jobs/outbox.ts).
//
// Delivery: each attempt is bounded (timeoutMs) and signs a fresh token. §2.8: the RP answers 200
// on success (204 is accepted too, as some frameworks send it; any 2xx counts). A timeout, a
// refused connection, 408, 429 or a 5xx is retried after a back-off counted on the injected clock,
// up to maxAttempts; any other answer (400: the RP rejected the token; a redirect, which is never
// followed) cannot change by retrying and ends the delivery at once. The final outcome is recorded
// on the row and written as an audit event (logout.delivered, logout.failed); retries are logged.
// The token itself never reaches a log, the database or an error message.
//
// Replicas: rows are claimed under a lease, and a row is claimed as soon as an attempt ends; the
// store's per-client bound keeps one client's backlog from filling every slot.
//
// Outages: an outcome the database could not take is kept and saved before anything new is
// claimed, so a logout the receiver accepted is not sent again when its lease runs out. Only a
// worker that dies before saving leaves its rows to be sent again after the lease: delivery is at
// least once, and a receiver de-duplicates by sid (each attempt signs a new jti). The per-client
// bound counts an attempt only for its timeout plus the kit's IN_FLIGHT_MARGIN_MS, so such
// leftover leases never hold up the client's other logouts for the lease's length.
import type { Logger } from 'pino'
import type { Clock } from '../../domain/clock.js'
import { createOutboxWorker, OUTBOX_DEFAULTS, type Attempt, type OutboxOptions, type OutboxWorker, type Post } from '../../jobs/outbox.js'
import type { AuditSink } from '../../observe/audit.js'
import type { BackchannelLogoutStore, LogoutDelivery } from '../../stores/backchannel-logouts.js'
import type { ClientStore } from '../../stores/clients.js'
import { signLogoutToken } from './logout-token.js'
import type { SigningKeyService } from '../../keys/signing-keys.js'

export type BackchannelLogoutOptions = OutboxOptions

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

export type BackchannelLogoutWorker = OutboxWorker

export function createBackchannelLogoutWorker(deps: BackchannelLogoutDeps): BackchannelLogoutWorker {
  const o: BackchannelLogoutOptions = { ...OUTBOX_DEFAULTS, ...deps.options }
  const { clock, store } = deps

  async function send(d: LogoutDelivery, post: Post): Promise<Attempt> {
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
    return post(uri, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ logout_token: token }).toString(),
    })
  }

  const fields = (d: LogoutDelivery) => ({
    clientId: d.clientId,
    subject: d.subjectId,
    sid: d.sid,
    attempts: d.attempts,
    sessionEnd: d.reason,
  })

  return createOutboxWorker<LogoutDelivery>({
    label: 'back-channel logout',
    clock,
    logger: deps.logger,
    options: o,
    store,
    send: async (d, post) => ({ attempt: await send(d, post) }),
    onDelivered: (d, httpStatus) => deps.audit.emit({ event: 'logout.delivered', ...fields(d), httpStatus }),
    onFailed: (d, error, httpStatus) => deps.audit.emit({ event: 'logout.failed', ...fields(d), reason: error, httpStatus }),
    logFields: (d) => ({ sid: d.sid }),
  })
}
