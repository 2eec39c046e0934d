// The pg driver: a Pool for queries and transactions, one dedicated connection for LISTEN.
import pg from 'pg'
import type { Db, DbPoolStats, NotificationHandler, Queryable, QueryOptions, QueryResult } from './db.js'

export interface PgDbOptions {
  connectionString: string
  max?: number
  /** Bound on waiting for a pooled connection or opening a new one (ms); 0 or unset: none. */
  connectTimeoutMs?: number
  /** Told about errors on idle connections and on the LISTEN connection; never fatal. */
  onError?: (err: Error) => void
}

export function createPgDb(opts: PgDbOptions): Db {
  const pool = new pg.Pool({
    connectionString: opts.connectionString,
    max: opts.max ?? 10,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 0,
    // TCP keep-alive: a connection to a server that vanished is noticed, not held forever.
    keepAlive: true,
  })
  const onError = opts.onError ?? (() => {})
  // An idle client died (server restart): the pool replaces it. When the server goes away every
  // idle client dies at once: one report, then none until a statement succeeds again.
  let idleErrorReported = false
  pool.on('error', (err) => {
    if (!idleErrorReported) onError(err)
    idleErrorReported = true
  })
  const listener = createListener(opts.connectionString, onError)
  const waits = timeAcquisitions(pool)

  const run = async <R>(
    q: pg.Pool | pg.PoolClient,
    sql: string,
    params?: readonly unknown[],
    options?: QueryOptions,
  ): Promise<QueryResult<R>> => {
    if (options?.lockTimeoutMs)
      return withLockTimeout(q, options.lockTimeoutMs, (c) => run<R>(c, sql, params, { ...options, lockTimeoutMs: undefined }))
    const values = params as unknown[] | undefined
    // A named statement is parsed and planned once per connection, then only bound and executed.
    // With a timeout, pg rejects after it and the pool discards the connection (the statement may
    // still be in flight on it).
    const res =
      options?.name || options?.timeoutMs
        ? await q.query({
            text: sql,
            values,
            ...(options.name ? { name: options.name } : {}),
            ...(options.timeoutMs ? { query_timeout: options.timeoutMs } : {}),
          })
        : await q.query(sql, values)
    idleErrorReported = false
    return { rows: res.rows as R[], rowCount: res.rowCount ?? 0 }
  }

  return {
    kind: 'pg',
    query: (sql, params, options) => run(pool, sql, params, options),
    async exec(sql) {
      await pool.query(sql)
    },
    async transaction(fn) {
      const client = await pool.connect()
      const tx: Queryable = {
        query: (sql, params, options) => run(client, sql, params, options),
        exec: async (sql) => void (await client.query(sql)),
      }
      try {
        await client.query('BEGIN')
        const result = await fn(tx)
        await client.query('COMMIT')
        client.release()
        return result
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {})
        client.release(true) // never hand a connection in an unknown state back to the pool
        throw err
      }
    },
    listen: (channel, handler) => listener.listen(channel, handler),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, ...waits }),
    async close() {
      if (pool.ended || pool.ending) return // idempotent, like PGlite's
      await listener.close()
      await pool.end()
    },
  }
}

/** Runs fn on one connection (from the pool, or the transaction's) with lock_timeout set, then resets it. */
async function withLockTimeout<T>(q: pg.Pool | pg.PoolClient, ms: number, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = q instanceof pg.Pool ? await q.connect() : q
  let broken: Error | undefined // a connection whose setting could not be restored is discarded
  try {
    await client.query(`SET lock_timeout = ${Math.max(1, Math.round(ms))}`).catch((err: Error) => {
      broken = err
      throw err
    })
    return await fn(client)
  } finally {
    if (!broken) await client.query('RESET lock_timeout').catch((err: Error) => (broken = err))
    if (client !== q) client.release(broken)
  }
}

/** One connection shared by every LISTEN; reconnects with back-off and tells handlers to resync. */
function createListener(connectionString: string, onError: (err: Error) => void) {
  const handlers = new Map<string, Set<NotificationHandler>>()
  let client: pg.Client | undefined
  let connecting: Promise<pg.Client> | undefined
  let closed = false
  let retryTimer: NodeJS.Timeout | undefined

  const connect = (): Promise<pg.Client> => {
    connecting ??= (async () => {
      const c = new pg.Client({ connectionString })
      c.on('notification', (msg) => handlers.get(msg.channel)?.forEach((h) => h(msg.payload ?? '')))
      c.on('error', (err) => {
        if (!retrying) onError(err)
        if (client === c) {
          retrying = true
          reconnectLater()
        }
      })
      await c.connect()
      for (const channel of handlers.keys()) await c.query(`LISTEN ${quoteIdent(channel)}`)
      client = c
      return c
    })().finally(() => {
      connecting = undefined
    })
    return connecting
  }

  // While the server is away every retry fails: the first failure is reported, the others are
  // not, until a connection succeeds again (an outage is one line, not one a second).
  let retrying = false
  const retry = async () => {
    retryTimer = undefined
    try {
      await connect()
      retrying = false
      handlers.forEach((set) => set.forEach((h) => h(undefined)))
    } catch (err) {
      if (!retrying) onError(err as Error)
      retrying = true
      reconnectLater()
    }
  }
  const reconnectLater = () => {
    client = undefined
    if (closed || retryTimer) return
    // retry() handles its own failure (reported once, then another attempt), so nothing awaits it.
    retryTimer = setTimeout(() => void retry(), 1000)
    retryTimer.unref()
  }

  return {
    async listen(channel: string, handler: NotificationHandler) {
      let set = handlers.get(channel)
      const isNew = !set
      if (!set) handlers.set(channel, (set = new Set()))
      set.add(handler)
      const c = client ?? (await connect())
      if (isNew) await c.query(`LISTEN ${quoteIdent(channel)}`)
      return async () => {
        set.delete(handler)
        if (set.size === 0) {
          handlers.delete(channel)
          await client?.query(`UNLISTEN ${quoteIdent(channel)}`).catch(() => {})
        }
      }
    },
    async close() {
      closed = true
      if (retryTimer) clearTimeout(retryTimer)
      const c = client ?? (connecting ? await connecting.catch(() => undefined) : undefined)
      client = undefined
      await c?.end().catch(() => {})
    },
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

/**
 * Counts connection hand-outs and the time spent waiting for them. pool.query() goes through
 * pool.connect(callback) too, so wrapping connect covers queries and transactions alike.
 */
function timeAcquisitions(pool: pg.Pool): Pick<DbPoolStats, 'acquired' | 'waitSeconds'> {
  const stats = { acquired: 0, waitSeconds: 0 }
  const connect = pool.connect.bind(pool) as (
    cb?: (err: Error | undefined, client: unknown, release: unknown) => void,
  ) => Promise<pg.PoolClient> | undefined
  const done = (start: bigint) => {
    stats.acquired += 1
    stats.waitSeconds += Number(process.hrtime.bigint() - start) / 1e9
  }
  ;(pool as unknown as { connect: typeof connect }).connect = (cb) => {
    const start = process.hrtime.bigint()
    if (cb) {
      return connect((err, client, release) => {
        if (!err) done(start)
        cb(err, client, release)
      })
    }
    return connect()!.then((client) => {
      done(start)
      return client
    })
  }
  return stats
}
