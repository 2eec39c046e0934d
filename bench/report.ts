// Markdown output, ready to paste into docs/performance.md: the machine and the method at the top,
// one table per scenario, then the ratios against the targets that page lists. A missed target is
// reported (✗), not fatal: only a non-2xx answer fails the run.
import { readFileSync } from 'node:fs'
import { cpus, release } from 'node:os'
import type { LoadResult } from './load.js'
import type { Scenario } from './scenarios.js'

export interface RunInfo {
  databaseMode: string
  pinning: string
  connections: number
  warmupSeconds: number
  durationSeconds: number
  peerLabel: string
  autocannonVersion: string
}

export interface ScenarioOutcome {
  scenario: Scenario
  ours: LoadResult
  /** Under the same load (comparison 'peer'). */
  peer?: LoadResult
  /**
   * Bare Fastify under the same load: signing once per request (scenarios with signLimit), or
   * verifying once per request (scenarios with verifyLimit).
   */
  limit?: LoadResult
  /** Every round's ratio to the peer, when there was more than one (BENCH_ROUNDS); the tables show the median round. */
  ratios?: number[]
  /** Verifications per second in one process, by jose and by bare node:crypto (comparison 'verify'). */
  verifyRates?: { jose: number; crypto: number }
}

function cpuModel(): string {
  try {
    return /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? 'unknown CPU'
  } catch {
    return 'unknown CPU'
  }
}

export function header(info: RunInfo): string {
  return [
    '## Benchmark',
    '',
    `- Machine: ${cpuModel()}, ${cpus().length} CPUs, Linux ${release()}, Node ${process.version}`,
    `- Database: ${info.databaseMode}`,
    `- CPUs: ${info.pinning}`,
    `- Load: autocannon ${info.autocannonVersion}, ${info.connections} connections over loopback, ` +
      `${info.warmupSeconds} s warm-up (discarded), ${info.durationSeconds} s measured`,
    `- Peer: ${info.peerLabel} with its default in-memory adapter (no database I/O: this favours it)`,
    '',
  ].join('\n')
}

const int = (n: number) => Math.round(n).toLocaleString('en-US')
const ms = (n: number) => (n < 10 ? n.toFixed(1) : int(n))
const mib = (n: number | undefined) => (n === undefined ? '–' : int(n))

function row(label: string, r: LoadResult): string {
  return `| ${label} | ${int(r.rps)} | ${ms(r.p50)} | ${ms(r.p99)} | ${r.non2xx} | ${mib(r.peakRssMiB)} |`
}

/** Our rate over the comparison's, and whether the scenario's target is met. */
export function verdict(o: ScenarioOutcome): { ratio: number; met: boolean; target: string } {
  const base = o.scenario.comparison === 'verify' ? (o.verifyRates?.crypto ?? NaN) : (o.peer?.rps ?? NaN)
  const ratio = o.ours.rps / base
  const { minRatio, p99AtMostPeer } = o.scenario.target
  const p99Ok = !p99AtMostPeer || (o.peer !== undefined && o.ours.p99 <= o.peer.p99)
  const target = `≥ ${minRatio}×${p99AtMostPeer ? ' and p99 ≤ peer' : ''}`
  return { ratio, met: ratio >= minRatio && p99Ok, target }
}

export function scenarioTable(o: ScenarioOutcome, peerLabel: string): string {
  const lines = [
    `### (${o.scenario.id}) ${o.scenario.title}`,
    '',
    '| server | req/s | p50 ms | p99 ms | non-2xx | peak RSS MiB |',
    '|---|--:|--:|--:|--:|--:|',
    row('authz', o.ours),
  ]
  if (o.peer) lines.push(row(peerLabel, o.peer))
  if (o.limit) {
    const what = o.scenario.verifyLimit ? 'verification' : 'signature'
    lines.push(row(`limit: bare Fastify, one node:crypto ES256 ${what} per request`, o.limit))
  }
  if (o.verifyRates) {
    lines.push(`| limit: node:crypto verify alone, one process (verifications/s) | ${int(o.verifyRates.crypto)} | – | – | – | – |`)
    lines.push(`| jose \`jwtVerify\` alone, one process (verifications/s) | ${int(o.verifyRates.jose)} | – | – | – | – |`)
  }
  const v = verdict(o)
  const against = o.scenario.comparison === 'verify' ? 'node:crypto verify' : 'peer'
  lines.push('', `authz / ${against}: **${v.ratio.toFixed(2)}×** (target ${v.target}) ${v.met ? '✓' : '✗'}`)
  if (o.ratios) {
    const all = o.ratios.map((r) => `${r.toFixed(2)}×`).join(', ')
    lines.push(`rounds, alternating: ${all} (the table shows the median round)`)
  }
  if (o.limit) lines.push(`authz / limit: **${(o.ours.rps / o.limit.rps).toFixed(2)}×**`)
  if (o.limit && o.verifyRates && o.scenario.verifyLimit) {
    // What the loop's yardstick leaves for HTTP: bare Fastify verifying once per request is
    // the most any server on one CPU answers, and this is how far it stays from the loop.
    lines.push(`limit / node:crypto verify: ${(o.limit.rps / o.verifyRates.crypto).toFixed(2)}× (bare Fastify against the loop)`)
  }
  if (o.verifyRates) lines.push(`authz / jose: ${(o.ours.rps / o.verifyRates.jose).toFixed(2)}×`)
  lines.push('')
  return lines.join('\n')
}

export function summaryTable(outcomes: ScenarioOutcome[]): string {
  const lines = ['### Targets', '', '| scenario | authz / comparison | target | met | p99 ms |', '|---|--:|---|:-:|--:|']
  for (const o of outcomes) {
    const v = verdict(o)
    const against = o.scenario.comparison === 'verify' ? 'node:crypto verify' : 'oidc-provider'
    lines.push(
      `| (${o.scenario.id}) ${o.scenario.title} | ${v.ratio.toFixed(2)}× ${against} | ${v.target} | ${v.met ? '✓' : '✗'} | ${ms(o.ours.p99)} |`,
    )
  }
  return `${lines.join('\n')}\n`
}
