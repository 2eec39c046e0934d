// Background cleanup of expired state: CIBA requests, persisted grants (codes, refresh and
// reference tokens), revoked JWT ids, sign-in sessions, used jtis and failure counters.
// Batches by the expires_at indexes (short statements, never a long table lock: Duende users hit
// deadlocks and index-rebuild timeouts with one big DELETE), sized to take about targetBatchMs
// each, and as many of them as the backlog needs: a run goes on until nothing expired is left or
// its budget is spent, then the next run follows within a second. So cleanup keeps up with any
// issuance rate the database can write, instead of a fixed number of rows per minute. Runs
// never overlap.
import type { Logger } from 'pino'
import type { Clock } from '../domain/clock.js'
import { isUnavailable } from '../errors.js'

/**
 * CIBA requests are kept 5 minutes past their expiry, so a late poll still gets expired_token
 * (CIBA §11) rather than invalid_grant, and a consumed one still triggers replay revocation.
 */
export const CIBA_RETENTION_SECONDS = 300

export interface CleanupTask {
  name: string
  /** Deletes at most `limit` rows that expired before `before` (ms); returns how many. */
  remove(before: number, limit: number): Promise<number>
  /** How long past expiry a row is kept. */
  retentionSeconds?: number
}

export interface CleanupDeps {
  clock: Clock
  tasks: CleanupTask[]
  logger: Pick<Logger, 'info' | 'warn'>
  /** First batch size of every task; it then adapts (below). */
  batchSize?: number
  minBatch?: number
  maxBatch?: number
  /**
   * The time one DELETE should take. A full batch that took under half of it doubles the next
   * batch, one that took over twice it halves it: statements stay short whatever the database's
   * speed, and the rows removed per second follow the rate at which they expire.
   */
  targetBatchMs?: number
  /** Work per run, over all tasks; a run that ends with rows left schedules the next one soon. */
  runBudgetMs?: number
  intervalMs?: number
  /** The pause before the next run while a backlog remains. */
  busyIntervalMs?: number
  /** Monotonic milliseconds, for batch timing (not protocol time); default performance.now. */
  elapsed?: () => number
}

export interface CleanupRun {
  removed: Record<string, number>
  /** Tasks that still had expired rows when the run's budget ran out. */
  backlog: string[]
}

export function createCleanup(deps: CleanupDeps) {
  const minBatch = deps.minBatch ?? 100
  const maxBatch = deps.maxBatch ?? 20_000
  const targetMs = deps.targetBatchMs ?? 200
  const budgetMs = deps.runBudgetMs ?? 20_000
  const intervalMs = deps.intervalMs ?? 60_000
  const busyIntervalMs = deps.busyIntervalMs ?? 1_000
  const elapsed = deps.elapsed ?? (() => performance.now())
  const batch = new Map(deps.tasks.map((t) => [t.name, Math.min(maxBatch, Math.max(minBatch, deps.batchSize ?? 1000))]))
  let timer: NodeJS.Timeout | undefined
  let stopped = true
  let running: Promise<unknown> | undefined

  /** One DELETE of the task's oldest expired rows; true when rows may be left. */
  async function removeBatch(task: CleanupTask, now: number, removed: Record<string, number>): Promise<boolean> {
    const size = batch.get(task.name)!
    const t0 = elapsed()
    const n = await task.remove(now - (task.retentionSeconds ?? 0) * 1000, size)
    const ms = elapsed() - t0
    removed[task.name] = (removed[task.name] ?? 0) + n
    if (n >= size && ms < targetMs / 2) batch.set(task.name, Math.min(maxBatch, size * 2))
    else if (ms > targetMs * 2) batch.set(task.name, Math.max(minBatch, Math.floor(size / 2)))
    return n >= size
  }

  /** Round-robin over the tasks, one batch each per round, until none has rows left or the budget is spent. */
  async function run(): Promise<CleanupRun> {
    const now = deps.clock.now()
    const start = elapsed()
    const removed: Record<string, number> = Object.fromEntries(deps.tasks.map((t) => [t.name, 0]))
    let pending = deps.tasks
    while (pending.length > 0 && elapsed() - start < budgetMs) {
      const next: CleanupTask[] = []
      for (const task of pending) if (await removeBatch(task, now, removed)) next.push(task)
      pending = next
    }
    if (Object.values(removed).some((n) => n > 0)) deps.logger.info({ removed }, 'expired state removed')
    return { removed, backlog: pending.map((t) => t.name) }
  }

  const schedule = (ms: number) => {
    if (stopped) return
    timer = setTimeout(() => {
      running = run()
        .then((r) => r.backlog.length > 0)
        .catch((err: unknown) => {
          if (!isUnavailable(err)) deps.logger.warn({ err }, 'cleanup failed; will retry') // an outage is logged once elsewhere
          return false
        })
        .then((behind) => {
          running = undefined
          schedule(behind ? busyIntervalMs : intervalMs)
        })
    }, ms)
    timer.unref()
  }

  return {
    /** One run; returns the rows removed per task. */
    runOnce: async () => (await run()).removed,
    run,
    /** The batch size each task will use next. */
    batchSizes: () => Object.fromEntries(batch),
    start() {
      if (!stopped) return
      stopped = false
      schedule(intervalMs)
    },
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      timer = undefined
      await running
    },
  }
}
