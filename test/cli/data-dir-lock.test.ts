import { spawnSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { acquireDataDirLock, DataDirLockedError, LOCK_FILE } from '../../src/db/data-dir-lock.js'

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'authz-lock-'))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

describe('DATA_DIR lock', () => {
  it('is exclusive while its holder lives, and released on request', async () => {
    const dataDir = join(dir, 'a', 'data') // created when missing
    const lock = await acquireDataDirLock(dataDir)
    expect(await readFile(join(dataDir, LOCK_FILE), 'utf8')).toBe(`${process.pid}\n`)
    // Another process (pid 1 stands for "someone else") finds it held by this live one.
    const err = await acquireDataDirLock(dataDir, 1).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(DataDirLockedError)
    expect((err as Error).message).toBe(
      `the embedded database in ${dataDir} is open in another authz process (pid ${process.pid}), and it serves one process at a time: stop that process (kill -TERM ${process.pid}), run this, then start the server again; or run on PostgreSQL (DATABASE_URL), where the CLI works while servers run`,
    )
    await lock.release()
    const next = await acquireDataDirLock(dataDir, 1)
    await lock.release() // not ours any more: left alone
    expect(await readFile(join(dataDir, LOCK_FILE), 'utf8')).toBe('1\n')
    await next.release()
  })

  it('takes over a stale lock (dead pid, garbage, or our own pid after a container restart)', async () => {
    const dataDir = join(dir, 'b')
    const dead = spawnSync(process.execPath, ['-e', '0']).pid
    for (const content of [`${dead}\n`, 'garbage', `${process.pid}\n`]) {
      await writeFile(join(dataDir, LOCK_FILE), content).catch(async () => {
        await (await import('node:fs/promises')).mkdir(dataDir, { recursive: true, mode: 0o700 }) // a DATA_DIR is private
        await writeFile(join(dataDir, LOCK_FILE), content)
      })
      const lock = await acquireDataDirLock(dataDir)
      expect(await readFile(join(dataDir, LOCK_FILE), 'utf8')).toBe(`${process.pid}\n`)
      await lock.release()
    }
  })
})
