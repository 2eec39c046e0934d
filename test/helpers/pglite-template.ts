// The embedded test databases start from templates made once per run (global-setup.ts): the files
// of a PGlite data directory as a clean shutdown leaves them, packed into one snapshot file and
// written out as a directory.
//
// A test's database is a new PGlite instance whose in-memory filesystem is filled from the
// snapshot (read once per worker process) before PostgreSQL starts. That skips what loading a
// dumped tarball costs: parsing the tar and creating ~1,100 files path by path, then crash
// recovery (a dump is taken from a running instance). A child process (the server, the CLI) gets a
// copy of the directory.
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { MemoryFS, PGlite } from '@electric-sql/pglite'
import type { Db } from '../../src/db/db.js'
import { wrapPglite } from '../../src/db/pglite.js'

/** Where a template is: its data directory (for child processes) and its snapshot file (for PGlite in a worker). */
export interface PgliteTemplate {
  dataDir: string
  snapshot: string
}

interface Entry {
  /** Relative to the data directory, with a leading slash. */
  path: string
  /** Undefined for a directory. */
  data?: Uint8Array
}

type EmscriptenFs = PGlite['Module']['FS']
const pgdata = (pg: PGlite): string => (pg.Module as unknown as { ENV: { PGDATA: string } }).ENV.PGDATA

/** The data directory's entries, parents before children. */
function readTree(FS: EmscriptenFs, root: string): Entry[] {
  const entries: Entry[] = []
  const walk = (rel: string) => {
    for (const name of FS.readdir(root + rel).sort()) {
      if (name === '.' || name === '..') continue
      const path = `${rel}/${name}`
      const { mode } = FS.stat(root + path)
      if (FS.isDir(mode)) {
        entries.push({ path })
        walk(path)
      } else if (FS.isFile(mode)) {
        entries.push({ path, data: FS.readFile(root + path) })
      }
    }
  }
  walk('')
  return entries
}

/** PGlite's in-memory filesystem, read out once PostgreSQL has shut down. */
class CapturingFS extends MemoryFS {
  entries: Entry[] | undefined

  override async closeFs(): Promise<void> {
    this.entries = readTree(this.pg!.Module.FS, pgdata(this.pg!))
    await super.closeFs()
  }
}

// The snapshot file: a 4-byte little-endian length, that many bytes of JSON listing the entries
// ({ p: path, n: byte length, absent for a directory }) in creation order, then the files' bytes.
interface Listed {
  p: string
  n?: number
}

/**
 * Starts PGlite on `dump` (PGlite.dumpDataDir) and shuts it down, then writes what it left as the
 * template `name` under `dir`.
 */
export async function makeTemplate(dump: Blob, dir: string, name: string): Promise<PgliteTemplate> {
  const fs = new CapturingFS()
  await (await PGlite.create({ loadDataDir: dump, fs })).close()
  const entries = fs.entries!
  const dataDir = join(dir, name)
  await mkdir(dataDir, { mode: 0o700 })
  for (const e of entries) {
    if (e.data) await writeFile(join(dataDir, e.path), e.data, { mode: 0o600 })
    else await mkdir(join(dataDir, e.path), { mode: 0o700 })
  }
  const header = Buffer.from(JSON.stringify(entries.map((e): Listed => (e.data ? { p: e.path, n: e.data.length } : { p: e.path }))))
  const length = Buffer.alloc(4)
  length.writeUInt32LE(header.length)
  const snapshot = join(dir, `${name}.snapshot`)
  await writeFile(snapshot, Buffer.concat([length, header, ...entries.flatMap((e) => (e.data ? [e.data] : []))]))
  return { dataDir, snapshot }
}

async function readSnapshot(file: string): Promise<Entry[]> {
  const buf = await readFile(file)
  const headerLength = buf.readUInt32LE(0)
  const listed = JSON.parse(buf.subarray(4, 4 + headerLength).toString()) as Listed[]
  let offset = 4 + headerLength
  return listed.map(({ p, n }) => {
    if (n === undefined) return { path: p }
    // A Uint8Array view, not a Buffer: Buffer's slice() shares memory, Uint8Array's copies.
    const data = new Uint8Array(buf.buffer, buf.byteOffset + offset, n)
    offset += n
    return { path: p, data }
  })
}

/** PGlite's in-memory filesystem, holding a copy of the snapshot's files when PostgreSQL starts. */
class SnapshotFS extends MemoryFS {
  constructor(private readonly entries: Entry[]) {
    super()
  }

  override async initialSyncFs(): Promise<void> {
    const FS = this.pg!.Module.FS
    const root = pgdata(this.pg!)
    FS.mkdirTree(root)
    for (const e of this.entries) {
      // Each instance writes to its own copy: MEMFS owns the buffer it is given.
      if (e.data) FS.writeFile(root + e.path, e.data.slice(), { canOwn: true, mode: 0o600 })
      else FS.mkdir(root + e.path, 0o700)
    }
  }
}

const snapshots = new Map<string, Promise<Entry[]>>()

// A test database holds a few rows: a small buffer pool starts faster than PGlite's 128MB one and
// changes nothing a test can observe.
const START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB']

/** A new in-memory database holding what the snapshot file holds. */
export async function openSnapshot(file: string): Promise<Db> {
  let entries = snapshots.get(file)
  if (!entries) snapshots.set(file, (entries = readSnapshot(file)))
  return wrapPglite(await PGlite.create({ fs: new SnapshotFS(await entries), startParams: START_PARAMS }))
}

/** Copies the template data directory `from` to `to` (modes kept: files 0600, directories 0700). */
export function copyDataDir(from: string, to: string): Promise<void> {
  return cp(from, to, { recursive: true, errorOnExist: true, force: false })
}
