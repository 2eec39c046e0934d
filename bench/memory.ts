// `npm run bench:memory`: what the server keeps resident, so that a regression shows in these
// figures rather than in a user's container being killed. For the embedded database on a fresh
// data directory and on an existing one (the same directory, restarted), and for PostgreSQL when
// DATABASE_URL is set: VmRSS after start-up and a quiet period, then the peak (VmHWM, the kernel's
// high-water mark) under scenario (b) of `npm run bench` at 50 connections, and optionally a soak
// at a steady, moderate rate with RSS sampled along the way. Printed as Markdown.
//
// Environment: DATABASE_URL (adds the PostgreSQL rows), BENCH_QUIET (seconds of quiet before the
// idle reading, 60), BENCH_PEAK (seconds of load for the peak, 30), BENCH_CONNECTIONS (50),
// BENCH_SOAK (seconds of soak on the existing directory, 0: none), BENCH_SOAK_RATE (requests per
// second during the soak, 200), BENCH_NODE_ARGS (more node options for the server, to compare),
// BENCH_MAX_IDLE_MIB and BENCH_MAX_PEAK_MIB (budgets for the embedded rows: exit 1 when exceeded).
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { createCleanup } from './cleanup.js'
import { runLoad } from './load.js'
import { build, startOurServer, type OurServer } from './our-server.js'
import { detectPinning, memoryOf, pinSelf, type Pinning } from './processes.js'
import { SCENARIOS } from './scenarios.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const progress = (line: string) => process.stderr.write(`bench: ${line}\n`)
const print = (text: string) => process.stdout.write(`${text}\n`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function seconds(name: string, def: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return def
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number of seconds, got "${raw}"`)
  return n
}

interface Row {
  label: string
  readySeconds: number
  idleMiB: number
  peakMiB: number
  rps: number
  p99: number
}

const mib = (pid: number) => {
  const m = memoryOf(pid)
  if (!m) throw new Error('this benchmark reads /proc/<pid>/status (Linux only)')
  return m
}

/** Starts a server, waits `quiet` s, reads its RSS, loads it with scenario (b), reads its peak. */
async function measure(
  label: string,
  start: () => Promise<OurServer>,
  opts: { quiet: number; peak: number; connections: number },
): Promise<{ row: Row; server: OurServer }> {
  progress(`${label}: starting`)
  const t0 = performance.now()
  const server = await start()
  const readySeconds = (performance.now() - t0) / 1000
  progress(`${label}: ready in ${readySeconds.toFixed(1)} s, ${opts.quiet} s of quiet`)
  await sleep(opts.quiet * 1000)
  const { rssMiB: idleMiB, hwmMiB: startPeakMiB } = mib(server.child.pid)
  progress(`${label}: ${idleMiB.toFixed(0)} MiB idle, ${startPeakMiB.toFixed(0)} MiB at peak so far; scenario (b) for ${opts.peak} s`)
  const b = SCENARIOS.find((s) => s.id === 'b')!
  const { request } = await b.prepare({
    label: 'authz',
    url: server.url,
    tokenPath: '/connect/token',
    introspectionPath: '/connect/introspect',
  })
  const r = await runLoad(request, server.child.pid, { connections: opts.connections, warmupSeconds: 2, durationSeconds: opts.peak })
  if (r.non2xx > 0 || r.errors > 0 || r.warmupFailures > 0) throw new Error(`${label}: ${r.non2xx} non-2xx, ${r.errors} errors under load`)
  return { row: { label, readySeconds, idleMiB, peakMiB: mib(server.child.pid).hwmMiB, rps: r.rps, p99: r.p99 }, server }
}

/** A steady `rate` req/s of scenario (b) for `duration` s; RSS sampled every 30 s. */
async function soak(server: OurServer, duration: number, rate: number): Promise<number[]> {
  const b = SCENARIOS.find((s) => s.id === 'b')!
  const { request } = await b.prepare({
    label: 'authz',
    url: server.url,
    tokenPath: '/connect/token',
    introspectionPath: '/connect/introspect',
  })
  const samples = [mib(server.child.pid).rssMiB]
  const sampler = setInterval(() => samples.push(mib(server.child.pid).rssMiB), 30_000)
  try {
    const r = await autocannon({
      url: request.url,
      method: 'POST',
      headers: request.headers,
      body: request.body,
      connections: 5,
      overallRate: rate,
      duration,
    })
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`soak: ${r.non2xx} non-2xx, ${r.errors} errors`)
  } finally {
    clearInterval(sampler)
  }
  samples.push(mib(server.child.pid).rssMiB)
  return samples
}

/** Each embedded figure above BENCH_MAX_IDLE_MIB or BENCH_MAX_PEAK_MIB, as a sentence. */
function overBudget(rows: Row[]): string[] {
  const idle = seconds('BENCH_MAX_IDLE_MIB', 0)
  const peak = seconds('BENCH_MAX_PEAK_MIB', 0)
  const out: string[] = []
  for (const r of rows) {
    if (idle > 0 && r.idleMiB > idle) out.push(`${r.label}: ${r.idleMiB.toFixed(0)} MiB idle, budget ${idle} MiB`)
    if (peak > 0 && r.peakMiB > peak) out.push(`${r.label}: ${r.peakMiB.toFixed(0)} MiB at peak, budget ${peak} MiB`)
  }
  return out
}

async function main(): Promise<void> {
  const opts = {
    quiet: seconds('BENCH_QUIET', 60),
    peak: Math.max(1, seconds('BENCH_PEAK', 30)),
    connections: seconds('BENCH_CONNECTIONS', 50),
  }
  const soakSeconds = seconds('BENCH_SOAK', 0)
  const soakRate = Math.max(1, seconds('BENCH_SOAK_RATE', 200))
  const pinning: Pinning = detectPinning()
  pinSelf(pinning)
  const cleanup = createCleanup(progress)
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void cleanup.run().finally(() => process.exit(130)))
  }
  const rows: Row[] = []
  let soakSamples: number[] | undefined
  try {
    progress('build (unless dist/ is current)')
    build(ROOT)
    const port = 5400 + Math.floor(Math.random() * 500)
    const base = { root: ROOT, port, pinning, cpuProfDir: undefined, cleanup, keyEncryptionSecret: randomBytes(24).toString('base64url') }

    const fresh = await measure('embedded, fresh DATA_DIR', () => startOurServer({ ...base, databaseUrl: undefined }), opts)
    rows.push(fresh.row)
    await fresh.server.child.stop()
    const existing = await measure(
      'embedded, existing DATA_DIR',
      () => startOurServer({ ...base, databaseUrl: undefined, dataDir: fresh.server.dataDir! }),
      opts,
    )
    rows.push(existing.row)
    if (soakSeconds > 0) {
      progress(`soak: ${soakRate} req/s for ${soakSeconds} s`)
      soakSamples = await soak(existing.server, soakSeconds, soakRate)
    }
    await existing.server.child.stop()
    if (process.env.DATABASE_URL) {
      const pg = await measure('PostgreSQL (DATABASE_URL)', () => startOurServer({ ...base, databaseUrl: process.env.DATABASE_URL }), opts)
      rows.push(pg.row)
      await pg.server.child.stop()
    }

    print(`## Memory (${process.version}, ${pinning.note})\n`)
    print(
      `Idle: VmRSS after start-up and ${opts.quiet} s of quiet. Peak: VmHWM after scenario (b), ${opts.connections} connections for ${opts.peak} s.\n`,
    )
    print('| server | ready s | idle MiB | peak MiB | (b) req/s | (b) p99 ms |')
    print('|---|--:|--:|--:|--:|--:|')
    for (const r of rows) {
      print(
        `| ${r.label} | ${r.readySeconds.toFixed(1)} | ${r.idleMiB.toFixed(0)} | ${r.peakMiB.toFixed(0)} | ${Math.round(r.rps).toLocaleString('en')} | ${r.p99} |`,
      )
    }
    const over = overBudget(rows.filter((r) => r.label.startsWith('embedded')))
    if (over.length > 0) {
      process.exitCode = 1
      for (const line of over) progress(`over budget: ${line}`)
    }
    if (soakSamples) {
      const first = soakSamples[0]!
      const last = soakSamples[soakSamples.length - 1]!
      print(
        `\nSoak, embedded, ${soakRate} req/s for ${soakSeconds} s: RSS every 30 s ${soakSamples.map((s) => s.toFixed(0)).join(', ')} MiB ` +
          `(${(((last - first) / first) * 100).toFixed(1)} % from first to last).`,
      )
    }
  } catch (err) {
    process.exitCode = 1
    progress(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`)
  } finally {
    await cleanup.run()
  }
}

await main()
