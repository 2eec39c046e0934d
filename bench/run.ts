// `npm run bench`: our server against oidc-provider 9 under the same autocannon load, for the six
// scenarios of scenarios.ts, printed as Markdown (stdout; progress goes to stderr, so
// `npm run bench > perf.md` keeps only the tables).
//
// Method: each server in its own process pinned to CPU 0, the load generator (this process) on
// CPU 1, 50 connections over loopback, a discarded warm-up then a measured run per scenario and
// server, one server loaded at a time. Every request is checked once before the load (scenarios.ts);
// any non-2xx answer or socket error during a run fails the benchmark (exit 1).
//
// Environment: DATABASE_URL (unset: embedded PGlite in a temporary directory; set: a fresh database
// is created on that server and dropped afterwards), BENCH_DURATION (measured seconds, 10),
// BENCH_WARMUP (2), BENCH_CONNECTIONS (50), BENCH_SCENARIOS (e.g. "a,d"; all by default),
// BENCH_ROUNDS (1: how many times ours and the peer are measured per scenario, alternating; the
// round with the median ratio is reported, with every round's ratio),
// BENCH_CPU_PROF (a directory: our server runs under `node --cpu-prof` and writes its profile there),
// and DATABASE_POOL_SIZE, CLIENT_CACHE_TTL, ACCESS_TOKEN_LIFETIME, METRICS_PORT passed through to our server
// (METRICS_PORT: measure with the metrics collected).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { measureJoseVerify, startVerifyLimit, startPeer, startSignLimit, type Peer, type VerifyRates } from './baselines.js'
import { createCleanup, type Cleanup } from './cleanup.js'
import { runLoad, type LoadOptions, type LoadResult } from './load.js'
import { build, startOurServer, type OurServer } from './our-server.js'
import { detectPinning, memoryOf, pinSelf, type Pinning } from './processes.js'
import { header, scenarioTable, summaryTable, type ScenarioOutcome } from './report.js'
import { SCENARIOS, sendOnce, type Prepared, type Scenario, type Server } from './scenarios.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const progress = (line: string) => process.stderr.write(`bench: ${line}\n`)
const print = (text: string) => process.stdout.write(`${text}\n`)

function positiveInt(name: string, def: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return def
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number, got "${raw}"`)
  return n
}

function selectedScenarios(): Scenario[] {
  const ids = (process.env.BENCH_SCENARIOS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (ids.length === 0) return [...SCENARIOS]
  const unknown = ids.filter((id) => !SCENARIOS.some((s) => s.id === id))
  if (unknown.length > 0)
    throw new Error(`BENCH_SCENARIOS: unknown scenario ${unknown.join(', ')} (use ${SCENARIOS.map((x) => x.id).join(', ')})`)
  return SCENARIOS.filter((s) => ids.includes(s.id))
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer().once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolvePort(port))
    })
  })
}

/** The stack, plus the cause chain (fetch hides the socket error in `cause`). */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err)
  return `${err.stack ?? err.message}${err.cause === undefined ? '' : `\ncaused by: ${describe(err.cause)}`}`
}

/** Thrown when a server answered anything but 2xx under load; the message carries a sample answer. */
class BenchFailure extends Error {}

async function loadOrFail(
  s: Scenario,
  server: Server,
  pid: number,
  load: LoadOptions,
): Promise<{ result: LoadResult; prepared: Prepared }> {
  progress(`(${s.id}) ${server.label}: ${load.warmupSeconds} s warm-up, ${load.durationSeconds} s measured`)
  const prepared = await s.prepare(server)
  const { request } = prepared
  const r = await runLoad(request, pid, load)
  if (r.non2xx > 0 || r.errors > 0 || r.warmupFailures > 0) {
    const sample = await sendOnce(request).catch((err: unknown) => ({ status: 0, type: '', body: String(err) }))
    throw new BenchFailure(
      `scenario (${s.id}) ${s.title} on ${server.label}: ${r.non2xx} non-2xx, ${r.errors} errors/timeouts, ` +
        `${r.warmupFailures} failures in warm-up; status codes ${JSON.stringify(r.statusCodes)}\n` +
        `sample answer: ${sample.status} ${sample.type}\n${sample.body.slice(0, 1000)}`,
    )
  }
  return { result: r, prepared }
}

interface Servers {
  ours: OurServer
  peer: Peer
  oursApi: Server
  peerApi: Server
}

interface Context {
  sv: Servers
  load: LoadOptions
  pinning: Pinning
  /** The verify rates, measured once per run (scenarios c and c2 share them). */
  verifyRates?: VerifyRates
  root: string
  /** Rounds of ours against the peer per scenario (BENCH_ROUNDS). */
  rounds: number
}

/**
 * Ours and the peer, `rounds` times, the order alternating (ours first in odd rounds), so that a
 * host that speeds up or slows down during the run weighs on both alike. Returns the round with
 * the median ratio, and every round's ratio.
 */
async function peerRounds(s: Scenario, ctx: Context): Promise<{ ours: LoadResult; peer: LoadResult; ratios: number[] }> {
  const { sv, load } = ctx
  const rounds: Array<{ ours: LoadResult; peer: LoadResult }> = []
  for (let r = 0; r < ctx.rounds; r++) {
    const measure = (api: Server, pid: number) => loadOrFail(s, api, pid, load).then((x) => x.result)
    if (r % 2 === 0) {
      const ours = await measure(sv.oursApi, sv.ours.child.pid)
      rounds.push({ ours, peer: await measure(sv.peerApi, sv.peer.child.pid) })
    } else {
      const peer = await measure(sv.peerApi, sv.peer.child.pid)
      rounds.push({ ours: await measure(sv.oursApi, sv.ours.child.pid), peer })
    }
  }
  const ratio = (x: { ours: LoadResult; peer: LoadResult }) => x.ours.rps / x.peer.rps
  const sorted = [...rounds].sort((a, b) => ratio(a) - ratio(b))
  return { ...sorted[Math.floor((sorted.length - 1) / 2)]!, ratios: rounds.map(ratio) }
}

async function runScenario(s: Scenario, ctx: Context): Promise<ScenarioOutcome> {
  const { sv, load } = ctx
  if (s.comparison === 'peer') {
    const { ours, peer, ratios } = await peerRounds(s, ctx)
    const rounds = ratios.length > 1 ? { ratios } : {}
    if (!s.signLimit) return { scenario: s, ours, peer, ...rounds }
    // Started for this scenario only, so it holds no CPU or memory during the others.
    const cleanup = createCleanup(progress)
    try {
      const limit = await startSignLimit({ root: ctx.root, port: await freePort(), pinning: ctx.pinning, cleanup })
      const api: Server = { label: 'limit', url: limit.url, tokenPath: '/connect/token', introspectionPath: '' }
      return { scenario: s, ours, peer, ...rounds, limit: (await loadOrFail(s, api, limit.child.pid, load)).result }
    } finally {
      await cleanup.run()
    }
  }
  const ours = await loadOrFail(s, sv.oursApi, sv.ours.child.pid, load)
  if (ctx.verifyRates === undefined) {
    // A token our server just introspected, verified by jose and by node:crypto in a process on the server CPU.
    progress(`(${s.id}) jose jwtVerify and node:crypto verify: ${load.durationSeconds} s`)
    const discovery = (await (await fetch(`${sv.ours.url}/.well-known/openid-configuration`)).json()) as { jwks_uri: string }
    ctx.verifyRates = await measureJoseVerify({
      root: ROOT,
      pinning: ctx.pinning,
      jwksUrl: discovery.jwks_uri,
      issuer: sv.ours.url,
      token: ours.prepared.token!,
      durationMs: load.durationSeconds * 1000,
    })
  }
  if (!s.verifyLimit) return { scenario: s, ours: ours.result, verifyRates: ctx.verifyRates }
  // The same requests (our tokens, in the same order) against bare Fastify verifying each one.
  const cleanup = createCleanup(progress)
  try {
    const discovery = (await (await fetch(`${sv.ours.url}/.well-known/openid-configuration`)).json()) as { jwks_uri: string }
    const limit = await startVerifyLimit({
      root: ctx.root,
      port: await freePort(),
      pinning: ctx.pinning,
      cleanup,
      jwksUrl: discovery.jwks_uri,
      issuer: sv.ours.url,
    })
    const request = { ...ours.prepared.request, url: `${limit.url}/connect/introspect` }
    const answer = await sendOnce(request)
    if (answer.status !== 200 || !answer.body.includes('"active":true')) {
      throw new BenchFailure(`scenario (${s.id}) on the verify limit: ${answer.status} ${answer.body.slice(0, 300)}`)
    }
    progress(`(${s.id}) limit: ${load.warmupSeconds} s warm-up, ${load.durationSeconds} s measured`)
    const r = await runLoad(request, limit.child.pid, load)
    if (r.non2xx > 0 || r.errors > 0 || r.warmupFailures > 0)
      throw new BenchFailure(`scenario (${s.id}) on the verify limit: ${r.non2xx} non-2xx, ${r.errors} errors`)
    return { scenario: s, ours: ours.result, verifyRates: ctx.verifyRates, limit: r }
  } finally {
    await cleanup.run()
  }
}

async function startServers(pinning: Pinning, cpuProfDir: string | undefined, cleanup: Cleanup): Promise<Servers> {
  progress('starting authz and oidc-provider')
  const [oursPort, peerPort] = [await freePort(), await freePort()]
  const ours = await startOurServer({ root: ROOT, port: oursPort, pinning, databaseUrl: process.env.DATABASE_URL, cpuProfDir, cleanup })
  const peer = await startPeer({ root: ROOT, port: peerPort, pinning, cleanup })
  return {
    ours,
    peer,
    oursApi: { label: 'authz', url: ours.url, tokenPath: '/connect/token', introspectionPath: '/connect/introspect' },
    peerApi: { label: `oidc-provider ${peer.version}`, url: peer.url, tokenPath: '/token', introspectionPath: '/token/introspection' },
  }
}

async function main(): Promise<void> {
  const load: LoadOptions = {
    connections: positiveInt('BENCH_CONNECTIONS', 50),
    warmupSeconds: positiveInt('BENCH_WARMUP', 2),
    durationSeconds: Math.max(1, positiveInt('BENCH_DURATION', 10)),
  }
  const scenarios = selectedScenarios()
  const cpuProfDir = process.env.BENCH_CPU_PROF ? resolve(process.env.BENCH_CPU_PROF) : undefined
  if (cpuProfDir) mkdirSync(cpuProfDir, { recursive: true })
  const pinning = detectPinning()
  pinSelf(pinning)

  const cleanup = createCleanup(progress)
  let servers: Servers | undefined
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      progress(`${signal}: stopping servers`)
      void cleanup.run().finally(() => process.exit(130))
    })
  }
  try {
    progress('build (unless dist/ is current)')
    build(ROOT)
    servers = await startServers(pinning, cpuProfDir, cleanup)
    const ctx: Context = { sv: servers, load, pinning, root: ROOT, rounds: Math.max(1, positiveInt('BENCH_ROUNDS', 1)) }
    const { ours, peer } = ctx.sv
    const autocannonVersion = (JSON.parse(readFileSync(`${ROOT}/node_modules/autocannon/package.json`, 'utf8')) as { version: string })
      .version
    print(header({ databaseMode: ours.databaseMode, pinning: pinning.note, ...load, peerLabel: ctx.sv.peerApi.label, autocannonVersion }))

    const outcomes: ScenarioOutcome[] = []
    for (const s of scenarios) {
      const outcome = await runScenario(s, ctx)
      outcomes.push(outcome)
      print(scenarioTable(outcome, ctx.sv.peerApi.label))
    }
    print(summaryTable(outcomes))
    if (cpuProfDir) {
      // Lets profile-summary.ts keep only the samples taken while our server was under load.
      const windows = outcomes.map((o) => ({ scenario: o.scenario.id, ...o.ours.window }))
      writeFileSync(resolve(cpuProfDir, 'bench-windows.json'), JSON.stringify(windows))
    }
    const peak = (pid: number) => memoryOf(pid)?.hwmMiB.toFixed(0) ?? '–'
    print(
      `Peak RSS over the whole run (VmHWM): authz ${peak(ours.child.pid)} MiB` +
        `${ours.databaseMode.startsWith('embedded') ? ' (includes the embedded database)' : ''}, ${ctx.sv.peerApi.label} ${peak(peer.child.pid)} MiB.`,
    )
  } catch (err) {
    process.exitCode = 1
    progress(err instanceof BenchFailure ? `FAILED: ${err.message}` : `error: ${describe(err)}`)
    for (const child of [servers?.ours.child, servers?.peer.child]) {
      if (child && child.output() !== '') progress(`last output of ${child.name}:\n${child.output()}`)
    }
  } finally {
    await cleanup.run()
    if (cpuProfDir)
      progress(`CPU profile of authz written to ${cpuProfDir} (summarise: node --import tsx bench/profile-summary.ts ${cpuProfDir})`)
  }
}

await main()
