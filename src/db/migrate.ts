// Forward-only SQL migrations (migrations/NNNN_name.sql), each applied in its own transaction
// under a transaction-scoped advisory lock, so replicas starting together apply each one once.
// Applied files are recorded with a SHA-256 checksum; an edited, already applied file stops start-up.
import { createHash } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import type { Db, Queryable } from './db.js'

/** migrations/ beside src/ (and beside dist/ in the built package). */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url))

/** Arbitrary, fixed key for pg_advisory_xact_lock: "authz" in ASCII. */
const LOCK_KEY = 0x617574687a

export interface Migration {
  version: string
  name: string
  sql: string
  checksum: string
}

export class MigrationError extends Error {
  override readonly name = 'MigrationError'
}

export async function loadMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort()
  return Promise.all(
    files.map(async (file) => {
      const sql = await readFile(new URL(file, `file://${dir.endsWith('/') ? dir : dir + '/'}`), 'utf8')
      return {
        version: file.slice(0, 4),
        name: file.slice(5, -4),
        sql,
        checksum: createHash('sha256').update(sql).digest('hex'),
      }
    }),
  )
}

const ENSURE_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version text PRIMARY KEY,
  name text NOT NULL,
  checksum text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`

/** Applies pending migrations; returns the versions this call applied. */
export async function migrate(db: Db, migrations?: Migration[]): Promise<string[]> {
  const all = migrations ?? (await loadMigrations())
  const applied: string[] = []
  for (const m of all) {
    const didApply = await db.transaction(async (tx) => {
      await lockAndEnsureTable(tx)
      const done = await appliedChecksums(tx)
      verify(done, all)
      if (done.has(m.version)) return false
      await tx.exec(m.sql)
      await tx.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [m.version, m.name, m.checksum])
      return true
    })
    if (didApply) applied.push(m.version)
  }
  if (all.length === 0) {
    await db.transaction(async (tx) => {
      await lockAndEnsureTable(tx)
      verify(await appliedChecksums(tx), all)
    })
  }
  return applied
}

/** Versions that exist as files but are not applied yet; throws on a checksum mismatch. */
export async function pendingMigrations(db: Queryable, migrations?: Migration[]): Promise<string[]> {
  const all = migrations ?? (await loadMigrations())
  const exists = await db.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`)
  if (!exists.rows[0]?.t) return all.map((m) => m.version)
  return pendingOf(await appliedChecksums(db), all)
}

/** The applied migrations, in order: what the admin API tells a CLI of another version (src/cli/migrate.ts). */
export async function appliedMigrations(db: Queryable): Promise<{ version: string; name: string; checksum: string }[]> {
  const exists = await db.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`)
  if (!exists.rows[0]?.t) return []
  const { rows } = await db.query<{ version: string; name: string; checksum: string }>(
    'SELECT version, name, checksum FROM schema_migrations ORDER BY version',
  )
  return rows
}

/** Versions of `all` not among the applied ones (version → checksum); throws on a checksum mismatch. */
export function pendingOf(done: Map<string, string>, all: Migration[]): string[] {
  verify(done, all)
  return all.filter((m) => !done.has(m.version)).map((m) => m.version)
}

async function lockAndEnsureTable(tx: Queryable) {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY])
  await tx.exec(ENSURE_TABLE)
}

async function appliedChecksums(q: Queryable): Promise<Map<string, string>> {
  const { rows } = await q.query<{ version: string; checksum: string }>('SELECT version, checksum FROM schema_migrations')
  return new Map(rows.map((r) => [r.version, r.checksum]))
}

function verify(done: Map<string, string>, all: Migration[]) {
  for (const m of all) {
    const sum = done.get(m.version)
    if (sum !== undefined && sum !== m.checksum) {
      throw new MigrationError(
        `migration ${m.version}_${m.name}.sql was changed after it was applied (checksum ${sum.slice(0, 12)}… in the database, ${m.checksum.slice(0, 12)}… on disk); migrations are immutable: restore the file and add a new migration`,
      )
    }
  }
  const known = new Set(all.map((m) => m.version))
  const unknown = [...done.keys()].filter((v) => !known.has(v))
  if (unknown.length > 0) {
    throw new MigrationError(
      `the database has migrations this build does not know (${unknown.join(', ')}): it was migrated by a newer version`,
    )
  }
}
