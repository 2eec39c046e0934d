// Summarises a V8 CPU profile of our server (`BENCH_CPU_PROF=dir npm run bench` runs it under
// `node --cpu-prof`): the functions with the most self time and the share per package or file,
// as a percentage of the samples where the process was busy (idle excluded). When run.ts left
// bench-windows.json beside the profile, each scenario's measured run is summarised on its own
// (V8 profile timestamps and process.hrtime share the monotonic clock), so start-up, migrations
// and the peer's turns do not blur the hot path.
// Usage: node --import tsx bench/profile-summary.ts <dir | file.cpuprofile> [top=20]
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'

interface Profile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>
  samples: number[]
  timeDeltas: number[]
  startTime: number
}
interface Window {
  scenario: string
  startUs: number
  endUs: number
}

/** The newest .cpuprofile in `path` when it is a directory. */
function profileFile(path: string): string {
  if (!statSync(path).isDirectory()) return path
  const files = readdirSync(path)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(path, f))
  const newest = files.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]
  if (!newest) throw new Error(`no .cpuprofile in ${path}`)
  return newest
}

/** `node_modules/<pkg>`, node core, or the project file (dist/…). */
function area(url: string): string {
  if (url === '') return '(native, GC)'
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (nm) return nm[1]!
  if (url.startsWith('node:')) return 'node core'
  return /\/((?:dist|src)\/.+)$/.exec(url)?.[1] ?? url
}

function summarise(profile: Profile, from: number, to: number, top: number): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]))
  const fns = new Map<string, number>()
  const areas = new Map<string, number>()
  let busy = 0
  let idle = 0
  let t = profile.startTime
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i] ?? 0
    if (t < from || t > to) return
    const f = byId.get(id)!
    if (f.functionName === '(idle)') return void idle++
    busy++
    const fn = `${f.functionName || '(anonymous)'}  ${area(f.url)}${f.url ? `:${f.lineNumber + 1}` : ''}`
    fns.set(fn, (fns.get(fn) ?? 0) + 1)
    areas.set(area(f.url), (areas.get(area(f.url)) ?? 0) + 1)
  })
  const pct = (n: number) => `${((100 * n) / Math.max(busy, 1)).toFixed(1).padStart(5)} %`
  const rank = (m: Map<string, number>, k: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, k)
      .map(([name, n]) => `  ${pct(n)}  ${name}`)
  return [
    `${busy} busy samples, ${idle} idle (${((100 * idle) / Math.max(busy + idle, 1)).toFixed(0)} % idle)`,
    `Top ${top} functions by self time:`,
    ...rank(fns, top),
    'Self time by package / file:',
    ...rank(areas, 12),
    '',
  ].join('\n')
}

const [path, topArg] = process.argv.slice(2)
if (!path) {
  process.stderr.write('usage: node --import tsx bench/profile-summary.ts <dir | file.cpuprofile> [top]\n')
  process.exit(2)
}
const file = profileFile(path)
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
const top = Number(topArg ?? 20)
const windowsFile = join(statSync(path).isDirectory() ? path : dirname(path), 'bench-windows.json')
const windows: Window[] = existsSync(windowsFile) ? (JSON.parse(readFileSync(windowsFile, 'utf8')) as Window[]) : []
process.stdout.write(`${file}\n\n`)
if (windows.length === 0) process.stdout.write(summarise(profile, -Infinity, Infinity, top))
for (const w of windows)
  process.stdout.write(`## scenario (${w.scenario}), measured run only\n${summarise(profile, w.startUs, w.endUs, top)}\n`)
