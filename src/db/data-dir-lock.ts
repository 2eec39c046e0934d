// PGlite is single-process: two processes opening one DATA_DIR would corrupt it. The server and
// the admin CLI both take this lock first: a file created with O_EXCL ('wx') holding the owner's
// pid. A lock whose pid is no longer alive (a crash, a kill -9) is stale and taken over.
import { readFile, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ensurePrivateDataDir } from './data-dir.js'

export const LOCK_FILE = 'authz.lock'

export class DataDirLockedError extends Error {
  constructor(
    readonly pid: number,
    dataDir: string,
  ) {
    // The one supported way, said plainly: the embedded database serves one process at a time.
    super(
      `the embedded database in ${dataDir} is open in another authz process (pid ${pid}), and it serves one process at a time: stop that process (kill -TERM ${pid}), run this, then start the server again; or run on PostgreSQL (DATABASE_URL), where the CLI works while servers run`,
    )
    this.name = 'DataDirLockedError'
  }
}

export interface DataDirLock {
  readonly path: string
  /** Removes the lock file if it is still ours. */
  release(): Promise<void>
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0) // signal 0: existence check only
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' // exists, owned by another user
  }
}

async function readPid(path: string): Promise<number | undefined> {
  const text = await readFile(path, 'utf8').catch(() => undefined)
  const pid = Number.parseInt(text ?? '', 10)
  return Number.isInteger(pid) && pid > 0 ? pid : undefined
}

export async function acquireDataDirLock(dataDir: string, pid = process.pid): Promise<DataDirLock> {
  await ensurePrivateDataDir(dataDir)
  const path = join(dataDir, LOCK_FILE)
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await writeFile(path, `${pid}\n`, { flag: 'wx', mode: 0o600 })
      return {
        path,
        async release() {
          if ((await readPid(path)) === pid) await unlink(path).catch(() => {})
        },
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    const holder = await readPid(path)
    if (holder === undefined && attempt < 2) {
      await new Promise((r) => setTimeout(r, 100)) // maybe just created, pid not written yet
      continue
    }
    // Our own pid in the file is stale too: a container restarts with the same pid (1).
    if (holder !== undefined && holder !== pid && isAlive(holder)) throw new DataDirLockedError(holder, dataDir)
    // Stale (or half-written by a process that died): remove it, unless someone replaced it meanwhile.
    if ((await readPid(path)) === holder) await unlink(path).catch(() => {})
  }
  throw new Error(`could not take the lock ${path}`)
}
