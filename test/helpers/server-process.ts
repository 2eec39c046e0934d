// Starts the real server (dist/main.js, as npm start runs it) as a child process on a free port and
// waits until it listens.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MAIN } from './built.js'
import { createTestDataDir, usingServer } from './db.js'

export interface ServerProcess {
  child: ChildProcess
  baseUrl: string
  port: number
  output: () => string
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>
  stop(): Promise<void>
}

export interface StartOptions {
  /** An existing DATA_DIR, kept after the process exits (default: a new one, removed afterwards). */
  dataDir?: string
}

export async function startServer(env: Record<string, string> = {}, entry = MAIN, opts: StartOptions = {}): Promise<ServerProcess> {
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'authz-server-')))
  // Start from the migrated template: a fresh PGlite initdb in the child costs 10 s or more.
  if (!opts.dataDir && !env.DATABASE_URL && !usingServer()) await createTestDataDir(dataDir)
  const args = entry.endsWith('.ts') ? ['--import', 'tsx', entry] : [entry]
  const child = spawn(process.execPath, args, {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      // The suite's scrypt cost (vitest.config.ts), unless a test names its own.
      ...(process.env.PASSWORD_HASH_COST ? { PASSWORD_HASH_COST: process.env.PASSWORD_HASH_COST } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  if (!opts.dataDir) void exited.then(() => rm(dataDir, { recursive: true, force: true }))

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in time:\n${out}`)), 45_000)
    const check = () => {
      // A JSON line or, with LOG_FORMAT=pretty, a line for a person.
      const m = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(Number(m[1]))
      }
    }
    child.stdout.on('data', check)
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code} before listening:\n${out}`))
    })
  })
  return {
    child,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    output: () => out,
    exited,
    async stop() {
      if (child.exitCode === null) child.kill('SIGKILL')
      await exited
    },
  }
}

/**
 * Resolves once the server has written `text`, or fails with its output after `timeoutMs`. Tests
 * wait for what the server says it did, not for a fixed time a loaded machine may not honour.
 */
export async function waitForOutput(server: ServerProcess, text: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!server.output().includes(text)) {
    if (Date.now() > deadline) throw new Error(`the server did not write ${text} within ${timeoutMs} ms:\n${server.output()}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}
