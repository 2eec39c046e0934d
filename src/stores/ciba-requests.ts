// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (ciba-requests.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.
import type { CibaRequest } from '../domain/types.js'
import type { PollRecord } from './polling.js'

export type NewCibaRequest = Omit<CibaRequest, 'status' | 'approvedScopes' | 'authTime' | 'lastPolledAt' | 'decidedAt' | 'consumedAt'> & {
  /** The raw auth_req_id; the store keeps only its hash. */
  authReqId: string
}

export type CibaDecision = { status: 'approved'; approvedScopes: string[]; authTime: number } | { status: 'denied' }

/** CIBA requests. Every state change is one SQL statement (ARCHITECTURE.md "Data rules"). */
export interface CibaRequestStore {
  create(req: NewCibaRequest): Promise<void>
  findByAuthReqId(authReqId: string): Promise<CibaRequest | undefined>
  findById(id: string): Promise<CibaRequest | undefined>
  /** Pending, unexpired requests, oldest first (operators' `authz ciba list`). */
  listPending(now: number, limit: number): Promise<CibaRequest[]>
  /**
   * Creates the request unless `maxPending` (> 0; 0: no cap) pending, unexpired requests of the same
   * client for the same user exist at `now`; false when refused. Concurrent calls for one client
   * and user are serialized, so the cap holds exactly.
   */
  createWithinLimit(req: NewCibaRequest, maxPending: number, now: number): Promise<boolean>
  /** CIBA §11 throttle (PolledGrantStore.recordPoll). */
  recordPoll(id: string, now: number): Promise<PollRecord | undefined>
  /** Approves or denies, only while pending and unexpired; the updated request, or undefined. */
  decide(id: string, decision: CibaDecision, now: number): Promise<CibaRequest | undefined>
  /** Single use: marks an approved, unexpired, unconsumed request consumed; undefined otherwise. */
  consume(id: string, now: number): Promise<CibaRequest | undefined>
  /** Deletes requests that expired before `before`, at most `limit` rows; returns how many. */
  removeExpired(before: number, limit: number): Promise<number>
}
