// Background cleanup of expired state: CIBA requests, persisted grants (codes, refresh and
// reference tokens), revoked JWT ids, sign-in sessions, used request-object jtis and failure counters.
// Small batches by the expires_at indexes (short statements, never a long table lock: Duende
// users hit deadlocks and index-rebuild timeouts with one big DELETE). Runs never overlap.
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
  batchSize?: number
  /** Batches per task per run: bounds one run's work; the next run continues. */
  maxBatches?: number
  intervalMs?: number
}

export function createCleanup(deps: CleanupDeps) {
  const batchSize = deps.batchSize ?? 500
  const maxBatches = deps.maxBatches ?? 20
  const intervalMs = deps.intervalMs ?? 60_000
  let timer: NodeJS.Timeout | undefined
  let running: Promise<unknown> | undefined

  async function drain(task: CleanupTask, now: number): Promise<number> {
    const before = now - (task.retentionSeconds ?? 0) * 1000
    let total = 0
    for (let i = 0; i < maxBatches; i++) {
      const n = await task.remove(before, batchSize)
      total += n
      if (n < batchSize) break
    }
    return total
  }

  async function runOnce(): Promise<Record<string, number>> {
    const now = deps.clock.now()
    const removed: Record<string, number> = {}
    for (const task of deps.tasks) removed[task.name] = await drain(task, now)
    if (Object.values(removed).some((n) => n > 0)) deps.logger.info({ removed }, 'expired state removed')
    return removed
  }

  return {
    runOnce,
    start() {
      if (timer) return
      timer = setInterval(() => {
        if (running) return // never overlap runs
        running = runOnce()
          .catch((err: unknown) => {
            if (!isUnavailable(err)) deps.logger.warn({ err }, 'cleanup failed; will retry') // an outage is logged once elsewhere
          })
          .finally(() => (running = undefined))
      }, intervalMs)
      timer.unref()
    },
    async stop() {
      if (timer) clearInterval(timer)
      timer = undefined
      await running
    },
  }
}
