// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (ciba-requests.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.
import type { CibaRequest, SignInRecord } from '../domain/types.js'
import type { PollRecord } from './polling.js'

export type NewCibaRequest = Omit<
  CibaRequest,
  'status' | 'approvedScopes' | 'authTime' | 'amr' | 'signInIdp' | 'lastPolledAt' | 'decidedAt' | 'consumedAt' | 'deliveryMode'
> & {
  /** The client's delivery mode (CIBA Core §5); default poll. */
  deliveryMode?: CibaRequest['deliveryMode'] | undefined
  /** The raw auth_req_id; the store keeps only its hash. */
  authReqId: string
  /**
   * Ping and push: the auth_req_id and client_notification_token, sealed (src/flows/ciba/sealed.ts),
   * for the delivery the decision queues; undefined in poll mode.
   */
  deliverySecret?: string | undefined
}

/**
 * Approved: the scopes, and the approver's sign-in (authTime in ms; amr and idp, kept as
 * signInIdp, when a person signed in to approve: an operator's approval has neither).
 */
export type CibaDecision =
  ({ status: 'approved'; approvedScopes: string[] } & Pick<SignInRecord, 'authTime'> & Partial<SignInRecord>) | { status: 'denied' }

export interface CibaRequestLimits {
  maxPending: number
  maxPerWindow: number
  windowMs: number
}

/**
 * created; or refused because of the pending cap; or because of the rate, with when the oldest of
 * the requests that fill the window leaves it (ms), the earliest time another one is accepted.
 */
/** What the admin API lists by: a request's state, `expired` being a pending one past its expiry. */
export type CibaListStatus = 'pending' | 'approved' | 'denied' | 'expired'

export interface CibaRequestFilter {
  clientId?: string | undefined
  subjectId?: string | undefined
  status?: CibaListStatus | undefined
  /** Only the requests after this one, in the list's order (the previous page's last). */
  after?: { createdAt: number; id: string } | undefined
}

export type CibaCreateResult = { kind: 'created' } | { kind: 'pending' } | { kind: 'rate'; retryAt: number }

/** CIBA requests. Every state change is one SQL statement (ARCHITECTURE.md "Data rules"). */
export interface CibaRequestStore {
  create(req: NewCibaRequest): Promise<void>
  findByAuthReqId(authReqId: string): Promise<CibaRequest | undefined>
  findById(id: string): Promise<CibaRequest | undefined>
  /** Pending, unexpired requests, oldest first (operators' `authz ciba list`). */
  listPending(now: number, limit: number): Promise<CibaRequest[]>
  /** The requests the filter matches at `now`, oldest first (created, then id), at most `limit`. */
  list(filter: CibaRequestFilter, now: number, limit: number): Promise<CibaRequest[]>
  /**
   * Creates the request unless the same client already has, for the same user, `maxPending`
   * pending, unexpired requests at `now`, or made `maxPerWindow` requests (whatever became of them)
   * in the `windowMs` before `now`; a limit of 0 is no limit. Concurrent calls for one client and
   * user are serialized, so both limits hold exactly.
   */
  createWithinLimit(req: NewCibaRequest, limits: CibaRequestLimits, now: number): Promise<CibaCreateResult>
  /** CIBA §11 throttle (PolledGrantStore.recordPoll). */
  recordPoll(id: string, now: number): Promise<PollRecord | undefined>
  /**
   * Approves or denies, only while pending and unexpired; the updated request, or undefined. A
   * ping or push request's delivery is queued (ciba-deliveries.ts) in the same statement, and the
   * request's sealed delivery secret moves into it; one whose expiry was queued is not decided.
   */
  decide(id: string, decision: CibaDecision, now: number): Promise<CibaRequest | undefined>
  /**
   * CIBA Core §12 (push: expired_token) and §10.2 (ping): queues the delivery of at most `limit`
   * ping and push requests that expired undecided before `now`. Each one's sealed delivery secret
   * moves into the outbox in the statement that queues it, so a request is queued once, however
   * many replicas look, and one so queued can no longer be decided. Returns how many were queued.
   */
  queueExpired(now: number, limit: number): Promise<number>
  /** When the next undecided ping or push request expires (ms), or undefined when none waits. */
  nextExpiry(): Promise<number | undefined>
  /** Single use: marks an approved, unexpired, unconsumed request consumed; undefined otherwise. */
  consume(id: string, now: number): Promise<CibaRequest | undefined>
  /** Deletes requests that expired before `before`, at most `limit` rows; returns how many. */
  removeExpired(before: number, limit: number): Promise<number>
}
