// The embedded database's directory holds the private signing keys (unencrypted without
// KEY_ENCRYPTION_SECRET): it is the running user's alone, as PostgreSQL insists for its own data
// directory. Created 0700; one that others can enter is refused. PGlite writes its files 0666
// whatever the umask, so they are narrowed to 0600 (directories 0700) whenever it opens and closes.
import { chmod, mkdir, readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'

const OTHERS = 0o077

export class DataDirPermissionError extends Error {
  override readonly name = 'DataDirPermissionError'
  constructor(dir: string, mode: number) {
    const octal = (mode & 0o777).toString(8).padStart(4, '0')
    super(`DATA_DIR ${dir} is open to other users (mode ${octal}) and holds the private signing keys: run chmod -R go-rwx ${dir}`)
  }
}

/** Creates `dir` 0700 when missing; refuses one that group or others may enter or read. */
export async function ensurePrivateDataDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const { mode } = await stat(dir)
  if ((mode & OTHERS) !== 0) throw new DataDirPermissionError(dir, mode)
}

/** Takes group and other access away from everything under `dir`: files 0600, directories 0700. */
export async function restrictDataDir(dir: string): Promise<void> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  await Promise.all(
    entries.map(async (e) => {
      if (!e.isFile() && !e.isDirectory()) return
      const path = join(e.parentPath, e.name)
      const { mode } = await stat(path)
      if ((mode & OTHERS) !== 0) await chmod(path, e.isDirectory() ? 0o700 : 0o600)
    }),
  )
}
