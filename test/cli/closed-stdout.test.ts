// `authz clients list | head -1`: the reader goes away before the command has printed everything.
// The command still finishes as it would (its database closed, its lock released) and exits 0,
// with nothing on stderr, instead of dying on EPIPE with a stack trace.
import { spawn } from 'node:child_process'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI, ROOT } from '../helpers/built.js'
import { createTestDataDir, createTestDb, usingServer, type TestDb } from '../helpers/db.js'
import { runCli } from './run-cli.js'

let dir: string
let env: Record<string, string>
let testDb: TestDb | undefined

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'authz-cli-pipe-'))
  if (usingServer()) {
    testDb = await createTestDb()
    env = { ...testDb.env }
  } else {
    env = { DATA_DIR: await createTestDataDir(join(dir, 'data')) }
  }
  expect((await runCli(['seed', 'seed/demo.json'], { env })).code).toBe(0)
})
afterAll(async () => {
  await testDb?.close()
  await rm(dir, { recursive: true, force: true })
})

describe('a reader that stops early', () => {
  it('ends the command cleanly: exit 0, no stack trace, the lock released', async () => {
    const { DATABASE_URL: _ignored, DATA_DIR: _alsoIgnored, ...base } = process.env
    const child = spawn(process.execPath, [CLI, 'clients', 'list'], {
      cwd: ROOT,
      env: { ...base, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    // The reader has gone before the first line (head -1 ends as soon as it has one line): every
    // write the command makes meets a closed pipe.
    child.stdout.destroy()
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    expect(stderr).toBe('')
    expect(code).toBe(0)
    if (!testDb) expect(await readdir(env.DATA_DIR!)).not.toContain('authz.lock')
  })
})
