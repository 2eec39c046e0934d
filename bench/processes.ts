// Child processes of the benchmark: pinned to one CPU with taskset (servers on CPU 0, the load
// generator on CPU 1, so neither steals the other's core), with their output kept for a failure
// report, their memory sampled from /proc, and a stop that always happens.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'

/** CPU layout of the run: pinned when taskset exists and there are two CPUs, else unpinned. */
export interface Pinning {
  enabled: boolean
  serverCpu: number
  loadCpu: number
  note: string
}

export function detectPinning(): Pinning {
  const cpus = availableParallelism()
  const taskset = spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0
  if (!taskset) return { enabled: false, serverCpu: 0, loadCpu: 0, note: 'not pinned (taskset not found: install util-linux)' }
  if (cpus < 2) return { enabled: false, serverCpu: 0, loadCpu: 0, note: `not pinned (${cpus} CPU available)` }
  return { enabled: true, serverCpu: 0, loadCpu: 1, note: 'servers on CPU 0, load generator on CPU 1 (taskset)' }
}

/** Pins this process (every thread, -a) to the load generator's CPU; autocannon runs in it. */
export function pinSelf(pinning: Pinning): void {
  if (!pinning.enabled) return
  spawnSync('taskset', ['-a', '-c', '-p', String(pinning.loadCpu), String(process.pid)], { stdio: 'ignore' })
}

export interface Child {
  readonly name: string
  readonly pid: number
  /** The last lines the process wrote (stdout and stderr), for failure reports. */
  output(): string
  /** Resolves when the process has exited. */
  readonly exited: Promise<number | null>
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it is gone. */
  stop(graceMs?: number): Promise<void>
}

const OUTPUT_LINES = 40

/** Starts `node <args>` pinned to `cpu` (taskset execs node, so the pid is node's). */
export function spawnNode(name: string, nodeArgs: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; pinning: Pinning }): Child {
  const [cmd, args] = opts.pinning.enabled
    ? ['taskset', ['-c', String(opts.pinning.serverCpu), process.execPath, ...nodeArgs]]
    : [process.execPath, nodeArgs]
  const proc: ChildProcess = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] })
  const lines: string[] = []
  const keep = (chunk: Buffer) => {
    lines.push(
      ...chunk
        .toString('utf8')
        .split('\n')
        .filter((l) => l.length > 0),
    )
    if (lines.length > OUTPUT_LINES) lines.splice(0, lines.length - OUTPUT_LINES)
  }
  proc.stdout?.on('data', keep)
  proc.stderr?.on('data', keep)
  const exited = new Promise<number | null>((resolve) => {
    proc.on('exit', (code) => resolve(code))
    proc.on('error', (err) => {
      lines.push(`spawn failed: ${err.message}`)
      resolve(null)
    })
  })
  return {
    name,
    pid: proc.pid ?? -1,
    output: () => lines.join('\n'),
    exited,
    async stop(graceMs = 10_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return
      proc.kill('SIGTERM')
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs)
      await exited
      clearTimeout(timer)
    },
  }
}

/** Polls `url` until it answers 200, or fails with the child's output when it exits or times out. */
export async function waitForHttp(child: Child, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  let exited = false
  void child.exited.then(() => (exited = true))
  while (performance.now() < deadline) {
    if (exited) throw new Error(`${child.name} exited before it was ready:\n${child.output()}`)
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) })
      if (res.status === 200) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`${child.name} not ready at ${url} after ${timeoutMs / 1000} s:\n${child.output()}`)
}

/** VmRSS and VmHWM (the kernel's peak RSS since start) in MiB, from /proc/<pid>/status. */
export function memoryOf(pid: number): { rssMiB: number; hwmMiB: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
    return { rssMiB: kib('VmRSS') / 1024, hwmMiB: kib('VmHWM') / 1024 }
  } catch {
    return undefined // not Linux, or the process is gone
  }
}
