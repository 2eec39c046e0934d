// A database that can be frozen, as a stopped (SIGSTOP) or partitioned PostgreSQL server is:
// from freeze() on, every statement and every transaction waits, and nothing answers until
// thaw(), when the waiting ones run. The app's own bounds (src/db/bounded.ts) must turn those
// waits into 503s. It can also go down, as a restarting server does: from fail() on, every
// statement fails at once the way the bounded wrapper reports a dropped connection (an
// UnavailableError), until recover(). Works over either test database (PGlite or the server).
import type { Db, Queryable } from '../../src/db/db.js'
import { UnavailableError } from '../../src/errors.js'

export interface FreezableDb {
  db: Db
  freeze(): void
  thaw(): void
  /** Statements that arrived while frozen. */
  readonly held: number
  fail(): void
  recover(): void
  /** Statements refused while down. */
  readonly refused: number
}

export function createFreezableDb(inner: Db): FreezableDb {
  let gate: Promise<void> | undefined
  let open: (() => void) | undefined
  let held = 0
  let down = false
  let refused = 0
  const wait = async () => {
    if (down) {
      refused++
      throw new UnavailableError('the database cannot be reached')
    }
    if (!gate) return
    held++
    await gate
  }
  const gated = (q: Queryable): Queryable => ({
    async query(sql, params, opts) {
      await wait()
      return q.query(sql, params, opts)
    },
    async exec(sql) {
      await wait()
      return q.exec(sql)
    },
  })
  const top = gated(inner)
  return {
    db: {
      kind: inner.kind,
      query: top.query,
      exec: top.exec,
      async transaction(fn) {
        await wait()
        return inner.transaction((tx) => fn(gated(tx)))
      },
      listen: (channel, handler) => inner.listen(channel, handler),
      close: () => inner.close(),
    },
    freeze() {
      gate ??= new Promise((resolve) => (open = resolve))
    },
    thaw() {
      open?.()
      gate = open = undefined
    },
    get held() {
      return held
    },
    fail() {
      down = true
    },
    recover() {
      down = false
    },
    get refused() {
      return refused
    },
  }
}
