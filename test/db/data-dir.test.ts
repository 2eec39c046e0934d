// The embedded data directory holds the private signing keys: the running user's alone.
import { spawnSync } from 'node:child_process'
import { chmod, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { acquireDataDirLock, LOCK_FILE } from '../../src/db/data-dir-lock.js'
import { DataDirPermissionError } from '../../src/db/data-dir.js'
import { openDatabase } from '../../src/db/open.js'
import { MAIN } from '../helpers/built.js'
import { usingServer } from '../helpers/db.js'

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'authz-datadir-'))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

const modeOf = async (p: string) => ((await stat(p)).mode & 0o777).toString(8)

/** Every file and directory under `root` by mode: { '600': n, '700': m }. */
async function modes(root: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const e of await readdir(root, { recursive: true, withFileTypes: true })) {
    const m = await modeOf(join(e.parentPath, e.name))
    out[m] = (out[m] ?? 0) + 1
  }
  return out
}

// DATA_DIR is the embedded database's directory: the PostgreSQL pass has nothing to check here.
describe.runIf(!usingServer())('DATA_DIR permissions', () => {
  it('creates the directory 0700 and leaves every file 0600 and directory 0700, open or closed', { timeout: 60_000 }, async () => {
    const dataDir = join(dir, 'fresh', 'data')
    const lock = await acquireDataDirLock(dataDir)
    expect(await modeOf(dataDir)).toBe('700')
    expect(await modeOf(join(dataDir, LOCK_FILE))).toBe('600')
    const db = await openDatabase({ databaseUrl: undefined, databasePoolSize: 1, dataDir })
    await db.query('CREATE TABLE t (x int)') // new files while it runs
    expect(Object.keys(await modes(dataDir)).sort()).toEqual(['600', '700'])
    await db.close()
    await lock.release()
    const after = await modes(dataDir)
    expect(Object.keys(after).sort()).toEqual(['600', '700'])
    expect(after['600']).toBeGreaterThan(900) // PGlite's own files, not just a handful
  })

  it('refuses a directory that other users may enter, in one line that says what to do', async () => {
    const dataDir = join(dir, 'open')
    await mkdir(dataDir)
    await chmod(dataDir, 0o755)
    const err = await acquireDataDirLock(dataDir).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(DataDirPermissionError)
    expect((err as Error).message).toBe(
      `DATA_DIR ${dataDir} is open to other users (mode 0755) and holds the private signing keys: run chmod -R go-rwx ${dataDir}`,
    )
    await chmod(dataDir, 0o750)
    await expect(acquireDataDirLock(dataDir)).rejects.toThrow(/\(mode 0750\)/)
    expect(await readdir(dataDir)).toEqual([]) // no lock taken, nothing written
  })

  it('the server refuses to start on such a directory, exit 1 and one line', () => {
    const res = spawnSync(process.execPath, [MAIN], {
      env: { PATH: process.env.PATH, PORT: '0', DATA_DIR: join(dir, 'open'), LOG_LEVEL: 'warn' },
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(res.status).toBe(1)
    expect(res.stderr).toBe(
      `authz failed to start: DATA_DIR ${join(dir, 'open')} is open to other users (mode 0750) and holds the private signing keys: run chmod -R go-rwx ${join(dir, 'open')}\n`,
    )
  })
})
