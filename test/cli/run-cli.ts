// Runs the admin CLI as a child process, as a person would (the authz command: dist/cli.js).
import { spawn } from 'node:child_process'
import { CLI, ROOT } from '../helpers/built.js'

export { ROOT }

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

export function runCli(args: string[], opts: { env?: Record<string, string>; input?: string } = {}): Promise<CliResult> {
  // The test runner's own DATABASE_URL must not leak into an embedded run.
  const { DATABASE_URL: _ignored, DATA_DIR: _alsoIgnored, ...base } = process.env
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: { ...base, ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  child.stdin.end(opts.input ?? '')
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}
