// Throttling of failed client authentication per client (or API) and source address (RFC 6749
// §10.10, RFC 9700 §4.15): CLIENT_AUTH_FAILURE_LIMIT failures in a row from one address block
// that pair for CLIENT_AUTH_BLOCK_DURATION, doubling up to CLIENT_AUTH_BLOCK_MAX_DURATION. Only
// the pair is blocked: the same client from another address is unaffected, so nobody can lock a
// client out by sending it wrong secrets. "Address" is the throttle unit of src/domain/address.ts:
// an IPv6 host is counted by its /64, which it may rotate through at will (RFC 8981), so that
// taking a new address does not buy a fresh allowance.
//
// The token and introspection hot paths stay free of database round trips: failures are counted
// in Postgres (every replica agrees), and blocks in force are read from memory, reloaded from
// Postgres at most every CLIENT_CACHE_TTL seconds (the staleness bound; with 0, before every
// authentication). A replica also learns of a block at once from its own failure records.
import type { Logger } from 'pino'
import { throttleAddress } from '../domain/address.js'
import type { Clock } from '../domain/clock.js'
import { isUnavailable } from '../errors.js'
import { createAuditLog, type AuditSink } from '../observe/audit.js'
import type { FailureCounterStore, FailurePolicy } from '../stores/failure-counters.js'

export type ClientAuthFailure =
  | 'unknown_client'
  | 'disabled'
  | 'secret_required'
  | 'bad_secret'
  | 'blocked'
  // A method other than the client's tokenEndpointAuthMethod; an assertion that failed its checks.
  | 'method_not_allowed'
  | 'bad_assertion'

export interface ClientAuthThrottle {
  /** Undefined when the blocks in memory are fresh; otherwise their reload, to await first. */
  refreshIfStale(): Promise<void> | undefined
  /** Seconds until the pair's block ends (for Retry-After), 0 when it is not blocked. */
  blockedFor(id: string, address: string): number
  /** Counts and logs a failure; the seconds of a block now in force, 0 when none. */
  recordFailure(id: string, address: string, reason: Exclude<ClientAuthFailure, 'blocked'>): Promise<number>
  /** Logs a refusal of a blocked pair (nothing is counted while blocked). */
  refused(id: string, address: string, retryAfter: number): void
  /** After a success: forgets the pair's failures when this replica counted any (no round trip otherwise). */
  recordSuccess(id: string, address: string): Promise<void> | undefined
}

export interface ClientAuthThrottleDeps {
  failures: Pick<FailureCounterStore, 'recordFailure' | 'clear' | 'listBlocked'>
  clock: Clock
  logger: Pick<Logger, 'info' | 'warn'>
  policy: FailurePolicy
  /** Seconds a replica may miss a block another replica started (CLIENT_CACHE_TTL). */
  staleSeconds: number
  /** client.auth_failed and client.blocked; by default written to `logger`. */
  audit?: AuditSink
}

/** Bound on the pairs kept in memory, so that a flood of addresses cannot grow memory without limit. */
export const MAX_TRACKED_PAIRS = 10_000

export function clientAuthPolicy(config: {
  clientAuthFailureLimit: number
  clientAuthBlockDuration: number
  clientAuthBlockMaxDuration: number
}): FailurePolicy {
  return {
    limit: config.clientAuthFailureLimit,
    baseSeconds: config.clientAuthBlockDuration,
    maxSeconds: config.clientAuthBlockMaxDuration,
  }
}

/** The key of a pair in memory; `unit` is the address's throttle unit, as stored. */
const pairKey = (id: string, unit: string) => `${id}\u0000${unit}`

export function createClientAuthThrottle(deps: ClientAuthThrottleDeps): ClientAuthThrottle {
  const { clock, logger } = deps
  const audit = deps.audit ?? createAuditLog({ logger })
  let blocked = new Map<string, number>() // pair → blocked until (ms)
  const failed = new Set<string>() // pairs this replica counted failures for since their last success
  let loadedAt = -Infinity
  let loading: Promise<void> | undefined

  async function reload(): Promise<void> {
    const now = clock.now()
    let rows
    try {
      rows = await deps.failures.listBlocked('client', now, MAX_TRACKED_PAIRS)
    } catch (err) {
      // Authentication goes on with the blocks known so far; the next reload is one period away.
      // An unreachable database is logged once per outage (src/db/bounded.ts), not every period.
      if (!isUnavailable(err)) logger.warn({ err }, 'reloading blocked clients failed; keeping the loaded ones')
      loadedAt = now
      return
    }
    const next = new Map(rows.map((r) => [pairKey(r.name, r.source), r.blockedUntil]))
    // Blocks this replica learnt of while the list was read are kept (a block never ends early).
    for (const [k, until] of blocked) if (until > now && !next.has(k) && next.size < MAX_TRACKED_PAIRS) next.set(k, until)
    blocked = next
    loadedAt = now
  }

  const secondsUntil = (until: number) => Math.max(1, Math.ceil((until - clock.now()) / 1000))

  return {
    refreshIfStale() {
      if (clock.now() - loadedAt < deps.staleSeconds * 1000) return undefined
      loading ??= reload().finally(() => (loading = undefined))
      return loading
    },
    blockedFor(id, address) {
      const until = blocked.get(pairKey(id, throttleAddress(address)))
      return until !== undefined && until > clock.now() ? secondsUntil(until) : 0
    },
    async recordFailure(id, address, reason) {
      audit.emit({ event: 'client.auth_failed', clientId: id, address, reason })
      const unit = throttleAddress(address)
      const key = pairKey(id, unit)
      if (failed.size >= MAX_TRACKED_PAIRS) failed.clear() // only the reset-on-success optimisation is lost
      failed.add(key)
      let r
      try {
        r = await deps.failures.recordFailure({ kind: 'client', name: id, source: unit }, deps.policy, clock.now())
      } catch (err) {
        // The answer is invalid_client all the same; only this failure goes uncounted.
        if (!isUnavailable(err)) logger.warn({ err, client_id: id, address }, 'counting a failed client authentication failed')
        return 0
      }
      // Not counted without a time: another writer started the block a moment ago.
      const until = r.blockedUntil ?? (r.counted ? undefined : clock.now() + deps.policy.baseSeconds * 1000)
      if (until === undefined) return 0
      if (blocked.size < MAX_TRACKED_PAIRS) blocked.set(key, until)
      if (r.counted) {
        audit.emit({
          event: 'client.blocked',
          clientId: id,
          address,
          reason: 'too_many_failures',
          lockedUntil: new Date(until).toISOString(),
          lockouts: r.blocks,
        })
      }
      return secondsUntil(until)
    },
    refused(id, address, retryAfter) {
      audit.emit({ event: 'client.auth_failed', clientId: id, address, reason: 'blocked', retryAfter })
    },
    recordSuccess(id, address) {
      const unit = throttleAddress(address)
      if (!failed.delete(pairKey(id, unit))) return undefined
      return deps.failures.clear({ kind: 'client', name: id, source: unit }).then(() => undefined)
    },
  }
}
