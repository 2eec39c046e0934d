// One database interface, two drivers: pg (DATABASE_URL) and PGlite (embedded).
// Stores depend on this and nothing else.

export interface QueryResult<R> {
  rows: R[]
  rowCount: number
}

/** Per-query options; drivers that cannot honour one ignore it. */
export interface QueryOptions {
  /**
   * Prepare this statement once per connection under this name and reuse its plan (pg named
   * prepared statements). One name must always go with one sql text. PGlite ignores it.
   */
  name?: string
  /** Give up on the statement after this long (pg: query_timeout, and the connection is discarded). PGlite ignores it. */
  timeoutMs?: number
  /**
   * Give up waiting for a lock after this long: the statement fails with SQLSTATE 55P03 instead
   * of queueing (pg: lock_timeout on the connection for this statement). PGlite (one connection,
   * no lock waits) ignores it.
   */
  lockTimeoutMs?: number
}

export interface Queryable {
  /** One statement, positional parameters ($1, $2, …). */
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[], opts?: QueryOptions): Promise<QueryResult<R>>
  /** Several statements, no parameters (migration scripts). */
  exec(sql: string): Promise<void>
}

/**
 * Called with a NOTIFY payload, or with `undefined` after the listening connection was
 * re-established: messages may have been missed, so the subscriber should resynchronise.
 */
export type NotificationHandler = (payload: string | undefined) => void

export interface Db extends Queryable {
  readonly kind: 'pg' | 'pglite'
  /** Runs fn in one transaction: COMMIT when it resolves, ROLLBACK when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  /** LISTEN on a channel; resolves to an unsubscribe function. */
  listen(channel: string, handler: NotificationHandler): Promise<() => Promise<void>>
  close(): Promise<void>
  /** Connection pool figures for the metrics; undefined for a driver without a pool (PGlite). */
  poolStats?(): DbPoolStats
}

export interface DbPoolStats {
  total: number
  idle: number
  waiting: number
  /** Connections handed out since start, and the seconds spent waiting for them. */
  acquired: number
  waitSeconds: number
}

/** Postgres error codes we branch on. */
export const PG_UNIQUE_VIOLATION = '23505'
export const PG_FOREIGN_KEY_VIOLATION = '23503'
export const PG_LOCK_NOT_AVAILABLE = '55P03'

export function pgErrorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined
}
