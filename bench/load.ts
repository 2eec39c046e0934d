// The load: autocannon, in this process (pinned to the load CPU), 50 keep-alive connections over
// loopback. Each run is a warm-up, discarded (JIT, caches, connection pools), then the measured run,
// during which the server's RSS is sampled from /proc.
import autocannon from 'autocannon'
import { memoryOf } from './processes.js'

/** One HTTP request, replayed as fast as the server answers. */
export interface BenchRequest {
  url: string
  headers: Record<string, string>
  body: string
  /** When set, each request sends the next of these bodies in turn instead of `body`. */
  bodies?: readonly string[]
}

export interface LoadOptions {
  connections: number
  warmupSeconds: number
  durationSeconds: number
}

export interface LoadResult {
  /** Mean of autocannon's per-second request counts. */
  rps: number
  p50: number
  p99: number
  non2xx: number
  /** Socket errors and timeouts: no response at all. */
  errors: number
  statusCodes: Record<string, number>
  /** non-2xx responses and errors during the (discarded) warm-up: they fail the run too. */
  warmupFailures: number
  /** The measured run on the monotonic clock in µs (V8 CPU profiles use the same clock). */
  window: { startUs: number; endUs: number }
  /** Highest VmRSS sampled during the measured run; undefined when /proc is unavailable. */
  peakRssMiB: number | undefined
}

const RSS_SAMPLE_MS = 250
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n)

/** Position in BenchRequest.bodies, shared by warm-up and measured run so the cycle continues. */
interface Cursor {
  next: number
}

function cannon(req: BenchRequest, connections: number, duration: number, cursor: Cursor) {
  const bodies = req.bodies
  const rotate =
    bodies && bodies.length > 0
      ? [{ setupRequest: (r: { body?: string | Buffer }) => ({ ...r, body: bodies[cursor.next++ % bodies.length] }) }]
      : undefined
  return autocannon({
    url: req.url,
    method: 'POST',
    headers: req.headers,
    body: req.body,
    connections,
    duration,
    ...(rotate ? { requests: rotate } : {}),
  })
}

export async function runLoad(req: BenchRequest, serverPid: number, opts: LoadOptions): Promise<LoadResult> {
  const cursor: Cursor = { next: 0 }
  let warmupFailures = 0
  if (opts.warmupSeconds > 0) {
    const w = await cannon(req, opts.connections, opts.warmupSeconds, cursor)
    warmupFailures = w.non2xx + w.errors + w.timeouts
  }
  let peak: number | undefined
  const sample = () => {
    const m = memoryOf(serverPid)
    if (m) peak = Math.max(peak ?? 0, m.rssMiB)
  }
  const sampler = setInterval(sample, RSS_SAMPLE_MS)
  try {
    const startUs = monotonicUs()
    const r = await cannon(req, opts.connections, opts.durationSeconds, cursor)
    const window = { startUs, endUs: monotonicUs() }
    sample()
    const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, s]) => [code, s.count]))
    return {
      rps: r.requests.average,
      p50: r.latency.p50,
      p99: r.latency.p99,
      non2xx: r.non2xx,
      errors: r.errors + r.timeouts,
      statusCodes,
      warmupFailures,
      window,
      peakRssMiB: peak,
    }
  } finally {
    clearInterval(sampler)
  }
}
