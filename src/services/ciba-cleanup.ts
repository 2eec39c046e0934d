// Background cleanup of CIBA state: requests, approval sessions and used request-object jtis.
// Small batches by the expires_at indexes (short statements, never a long table lock). Requests
// are kept 5 minutes past their expiry, so a late poll still gets expired_token (CIBA §11)
// rather than invalid_grant, and a consumed one still triggers replay revocation until then.
import type { Logger } from 'pino'
import type { Clock } from '../domain/clock.js'
import type { CibaRequestStore, UsedJtiStore, UserSessionStore } from '../stores/types.js'

export const CIBA_RETENTION_SECONDS = 300

export interface CibaCleanupDeps {
  clock: Clock
  requests: Pick<CibaRequestStore, 'removeExpired'>
  sessions: Pick<UserSessionStore, 'removeExpired'>
  usedJtis: Pick<UsedJtiStore, 'removeExpired'>
  logger: Pick<Logger, 'info' | 'warn'>
  batchSize?: number
  /** Batches per table per run: bounds one run's work; the next run continues. */
  maxBatches?: number
  intervalMs?: number
}

export function createCibaCleanup(deps: CibaCleanupDeps) {
  const batchSize = deps.batchSize ?? 500
  const maxBatches = deps.maxBatches ?? 20
  const intervalMs = deps.intervalMs ?? 60_000
  let timer: NodeJS.Timeout | undefined
  let running: Promise<unknown> | undefined

  async function drain(remove: (before: number, limit: number) => Promise<number>, before: number): Promise<number> {
    let total = 0
    for (let i = 0; i < maxBatches; i++) {
      const n = await remove(before, batchSize)
      total += n
      if (n < batchSize) break
    }
    return total
  }

  async function runOnce() {
    const now = deps.clock.now()
    const removed = {
      requests: await drain(deps.requests.removeExpired, now - CIBA_RETENTION_SECONDS * 1000),
      sessions: await drain(deps.sessions.removeExpired, now),
      usedJtis: await drain(deps.usedJtis.removeExpired, now),
    }
    if (removed.requests + removed.sessions + removed.usedJtis > 0) deps.logger.info(removed, 'CIBA cleanup')
    return removed
  }

  return {
    runOnce,
    start() {
      if (timer) return
      timer = setInterval(() => {
        if (running) return // never overlap runs
        running = runOnce()
          .catch((err: unknown) => deps.logger.warn({ err }, 'CIBA cleanup failed; will retry'))
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
