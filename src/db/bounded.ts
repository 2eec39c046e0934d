// Every wait for the database is bounded. The app's queries and transactions go through this
// wrapper: a statement that does not answer within DATABASE_QUERY_TIMEOUT, a transaction that
// cannot begin within DATABASE_CONNECT_TIMEOUT plus that, and every error that means the database
// cannot be reached (refused, reset, terminated, shutting down, canceled by statement_timeout)
// become an UnavailableError, which the error handler answers 503 temporarily_unavailable with
// Retry-After. An outage is reported once when it begins and once when it ends, with the count
// of failures in between: no stack trace per failed request. While the database is down, one
// operation a second goes to it as a probe and the others fail at once, so requests are answered
// 503 without waiting out the bound, and nothing piles up behind a database that is away.
import { UnavailableError } from '../errors.js'
import { pgErrorCode, type Db, type Queryable, type QueryOptions, type QueryResult } from './db.js'

export interface OutageEvents {
  /** The first failure after the database last answered. */
  down(err: Error): void
  /** The first answer after an outage: how long it lasted and how many operations failed. */
  up(info: { failures: number; seconds: number }): void
}

export interface BoundedDbOptions {
  queryTimeoutSeconds: number
  connectTimeoutSeconds: number
  events?: OutageEvents
  now?: () => number
  /** While down, how often an operation is let through to find out whether it is back (ms). */
  probeIntervalMs?: number
}

export interface BoundedDb extends Db {
  /** False from the first failure of an outage until the database answers again. */
  readonly available: boolean
  /** Operations that failed because the database was unavailable, since start. */
  readonly failures: number
}

/** Postgres SQLSTATEs meaning the server cannot be used right now (class 08, 53300, 57P0x, 57014). */
const UNAVAILABLE_CODES = /^(08...|53300|57P01|57P02|57P03|57014)$/
const NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])
/** node-postgres reports lost connections and its own timeouts with plain Errors. */
const PG_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection terminated unexpectedly|Cannot use a pool after calling end)/

export function isConnectionFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  if (err instanceof UnavailableError) return true
  const code = pgErrorCode(err)
  if (code !== undefined && (UNAVAILABLE_CODES.test(code) || NODE_CODES.has(code))) return true
  return PG_MESSAGES.test(err.message)
}

export function createBoundedDb(inner: Db, opts: BoundedDbOptions): BoundedDb {
  const queryMs = Math.round(opts.queryTimeoutSeconds * 1000)
  const connectMs = Math.round(opts.connectTimeoutSeconds * 1000)
  const retryAfterSeconds = Math.max(1, Math.ceil(opts.connectTimeoutSeconds))
  const now = opts.now ?? Date.now
  let available = true
  let failures = 0
  let failuresThisOutage = 0
  let downSince = 0
  const probeMs = opts.probeIntervalMs ?? 1000
  let lastProbe = -Infinity

  /** While down: true for the one operation that may try the database now. */
  const mayProbe = () => {
    if (available) return true
    const t = now()
    if (t - lastProbe < probeMs) return false
    lastProbe = t
    return true
  }
  const refuse = () => new UnavailableError('the database is unavailable', { retryAfterSeconds })

  const succeeded = () => {
    if (available) return
    available = true
    opts.events?.up({ failures: failuresThisOutage, seconds: Math.round((now() - downSince) / 1000) })
  }
  const counted = new WeakSet<Error>() // a statement's failure inside a transaction fails the transaction too
  const failed = (err: unknown): never => {
    if (!isConnectionFailure(err)) throw err
    const e =
      err instanceof UnavailableError ? err : new UnavailableError('the database cannot be reached', { cause: err, retryAfterSeconds })
    if (counted.has(e)) throw e
    counted.add(e)
    failures++
    if (available) {
      available = false
      downSince = lastProbe = now()
      failuresThisOutage = 0
      opts.events?.down(err as Error)
    }
    failuresThisOutage++
    throw e
  }

  /** Rejects with an UnavailableError if `p` has not settled within `ms`. */
  const within = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new UnavailableError(`the database did not answer ${what} in time`, { retryAfterSeconds })), ms)
      p.then(
        (v) => {
          clearTimeout(timer)
          resolve(v)
        },
        (err: Error) => {
          clearTimeout(timer)
          reject(err)
        },
      )
    })

  /** `gated`: a new operation (refused at once while down unless it is the probe), not a statement of an admitted transaction. */
  const bound = async <T>(p: () => Promise<T>, ms: number, what: string, gated: boolean): Promise<T> => {
    try {
      if (gated && !mayProbe()) throw refuse()
      const v = await within(p(), ms, what)
      succeeded()
      return v
    } catch (err) {
      return failed(err)
    }
  }

  const boundQueryable = (q: Queryable, gated: boolean): Queryable => ({
    query: <R>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> =>
      bound(() => q.query<R>(sql, params, { ...options, timeoutMs: queryMs }), queryMs, 'a query', gated),
    exec: (sql) => bound(() => q.exec(sql), queryMs, 'a query', gated),
  })
  const top = boundQueryable(inner, true)

  return {
    kind: inner.kind,
    get available() {
      return available
    },
    get failures() {
      return failures
    },
    query: top.query,
    exec: top.exec,
    async transaction(fn) {
      // Beginning waits for a connection and BEGIN; then each statement has its own bound; the
      // COMMIT after fn has one more. A deadline re-armed at each phase bounds the whole.
      let arm: (ms: number, what: string) => void = () => {}
      let disarm = () => {}
      const deadline = new Promise<never>((_, reject) => {
        let timer: NodeJS.Timeout | undefined
        arm = (ms, what) => {
          clearTimeout(timer)
          timer = setTimeout(() => reject(new UnavailableError(`the database did not answer ${what} in time`, { retryAfterSeconds })), ms)
        }
        disarm = () => clearTimeout(timer)
      })
      deadline.catch(() => {}) // observed through the race below
      if (!mayProbe()) return failed(refuse())
      arm(connectMs + queryMs, 'the start of a transaction')
      const run = inner.transaction(async (tx) => {
        disarm()
        succeeded() // BEGIN answered
        const result = await fn(boundQueryable(tx, false))
        arm(queryMs, 'a commit')
        return result
      })
      try {
        const result = await Promise.race([run, deadline])
        succeeded()
        return result
      } catch (err) {
        run.catch(() => {}) // the transaction may still end later; its outcome is no longer awaited
        return failed(err)
      } finally {
        disarm()
      }
    },
    listen: (channel, handler) => inner.listen(channel, handler),
    close: () => inner.close(),
    // The pool's own figures (metrics), where the driver has a pool.
    ...(inner.poolStats ? { poolStats: () => inner.poolStats!() } : {}),
  }
}
