// The admin API for the CLI of the embedded database's own DATA_DIR. PGlite serves one process, so
// while the server runs the CLI cannot open the database; instead the server serves the admin API
// on a listener of its own for it: a Unix socket in DATA_DIR (0600; a loopback port when the path
// is too long for a socket), whatever ADMIN_PORT says. The server writes where it listens and a
// random 256-bit credential to DATA_DIR/LOCAL_ADMIN_FILE (0600, as DATA_DIR is the owner's
// alone), takes only that credential there (src/admin/auth.ts createLocalAuth), and removes the
// file when it stops. A file left by a server that died names a pid no longer alive, or an address
// nobody answers: the CLI ignores it and opens the database.
import { randomBytes } from 'node:crypto'
import { readFile, rename, unlink, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { AdminListener } from './server.js'

export const LOCAL_ADMIN_FILE = 'admin-cli.json'
export const LOCAL_ADMIN_SOCKET = 'admin.sock'

/** Linux allows 107 bytes in a socket path (sun_path), macOS 103. */
const MAX_SOCKET_PATH = 100

/** What the file says: who wrote it, where to connect (a socket path or a loopback port), and with what. */
export interface LocalAdminAccess {
  pid: number
  socket?: string
  port?: number
  credential: string
}

export interface LocalAdmin {
  /** Where it listens: the socket path, or 127.0.0.1:port. */
  where: string
  /** Stops listening and removes the file (while it is still this process's). */
  close(): Promise<void>
}

/** A new credential: 32 random bytes, base64url. */
export const newLocalCredential = () => randomBytes(32).toString('base64url')

/** Listens for the local CLI and writes DATA_DIR/LOCAL_ADMIN_FILE; `listener` takes only `credential`. */
export async function serveLocalAdmin(listener: AdminListener, dataDir: string, credential: string): Promise<LocalAdmin> {
  const file = join(dataDir, LOCAL_ADMIN_FILE)
  const socket = resolve(dataDir, LOCAL_ADMIN_SOCKET)
  let access: LocalAdminAccess
  if (Buffer.byteLength(socket) <= MAX_SOCKET_PATH) {
    // Only this process holds DATA_DIR (its lock): a socket file still there is a dead server's.
    await unlink(socket).catch(() => {})
    await listener.listenSocket(socket)
    access = { pid: process.pid, socket, credential }
  } else {
    const { port } = await listener.listen(0, '127.0.0.1')
    access = { pid: process.pid, port, credential }
  }
  // Written whole under another name, then renamed: the CLI never reads half a file.
  const partial = `${file}.${process.pid}.tmp`
  await writeFile(partial, `${JSON.stringify(access)}\n`, { mode: 0o600 })
  await rename(partial, file)
  return {
    where: access.socket ?? `127.0.0.1:${access.port}`,
    async close() {
      if ((await readLocalAdminAccess(dataDir))?.pid === process.pid) await unlink(file).catch(() => {})
      await listener.close()
    },
  }
}

/** The file's content when it is present and well-formed; whether its server still runs is the reader's to find out. */
export async function readLocalAdminAccess(dataDir: string): Promise<LocalAdminAccess | undefined> {
  const text = await readFile(join(dataDir, LOCAL_ADMIN_FILE), 'utf8').catch(() => undefined)
  if (text === undefined) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined
  const { pid, socket, port, credential } = parsed as Record<string, unknown>
  if (typeof pid !== 'number' || typeof credential !== 'string') return undefined
  if (typeof socket === 'string') return { pid, socket, credential }
  if (typeof port === 'number') return { pid, port, credential }
  return undefined
}
