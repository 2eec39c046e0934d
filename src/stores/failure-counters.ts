// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (failure-counters.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.

/** What a failure counter counts (migrations/0003_failure_counters.sql). */
export type FailureKind = 'user' | 'client' | 'user_code' | 'device_user_code'

export interface FailureKey {
  kind: FailureKind
  /**
   * The subject id ('user', 'user_code'; for a username no account has, its keyed digest, never
   * the name), the client id / API name ('client') or the address's throttle unit ('device_user_code').
   */
  name: string
  /** '' ('user'; 'unknown-username' when name stands for a username no account has), the address's throttle unit ('client') or the client id ('user_code'). */
  source: string
}

/** When to block and for how long: `limit` failures in a row block for base·2^(blocks so far), capped at max. */
export interface FailurePolicy {
  limit: number
  baseSeconds: number
  /** The longest block; also how long a counter without a new failure is remembered. */
  maxSeconds: number
}

export type FailureRecord =
  /** Counted; blockedUntil is set when this failure started a block. */
  | { counted: true; failures: number; blocks: number; blockedUntil: number | undefined }
  /** Not counted: a block is in force (blockedUntil undefined when a concurrent writer set it just now). */
  | { counted: false; blockedUntil: number | undefined }

/** Failed-attempt counters shared by every replica. Every change is one SQL statement. */
export interface FailureCounterStore {
  /**
   * Counts one failure unless a block is in force, in one statement: the limit-th failure in a row
   * starts a block (failures back to 0, blocks + 1); concurrent callers never exceed the limit.
   */
  recordFailure(key: FailureKey, policy: FailurePolicy, now: number): Promise<FailureRecord>
  /** When the block in force at `now` ends, or undefined when there is none (a read; counts nothing). */
  blockedUntil(key: FailureKey, now: number): Promise<number | undefined>
  /**
   * Takes back the failure `counted` recorded (an attempt counted before it was known to be
   * right): one failure less, or, when that failure started the block, the block lifted and the
   * count back at limit - 1. Nothing when the counter moved on since (a later failure, a block).
   */
  forgive(key: FailureKey, counted: Extract<FailureRecord, { counted: true }>, policy: FailurePolicy): Promise<void>
  /** Forgets the counter (a success, or an administrator's unlock); false when there was none. */
  clear(key: FailureKey): Promise<boolean>
  /** Forgets every counter of these kinds for this name (`authz users unlock`); returns how many. */
  clearName(kinds: FailureKind[], name: string): Promise<number>
  /** Blocks in force at `now` of one kind, soonest ending last, at most `limit`. */
  listBlocked(kind: FailureKind, now: number, limit: number): Promise<Array<{ name: string; source: string; blockedUntil: number }>>
  removeExpired(before: number, limit: number): Promise<number>
}
