// A fresh, migrated database for one test file: a PGlite instance started from the migrated
// template (pglite-template.ts), or a clone of the migrated template on the server named by
// DATABASE_URL.
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { inject } from 'vitest'
import type { Db } from '../../src/db/db.js'
import { createPgDb } from '../../src/db/pg.js'
import { withDatabase } from './global-setup.js'
import { copyDataDir, openSnapshot } from './pglite-template.js'

export interface TestDb {
  db: Db
  /** For tests that start a child process (CLI, server) against the same database. */
  env: Record<string, string>
  close(): Promise<void>
}

/** Embedded (PGlite) unless DATABASE_URL is set. */
export const usingServer = (): boolean => inject('dbTemplate').kind === 'pg'

export async function createTestDb(): Promise<TestDb> {
  const tpl = inject('dbTemplate')
  if (tpl.kind === 'pglite') {
    const db = await openSnapshot(tpl.migrated.snapshot)
    return { db, env: {}, close: () => db.close() }
  }
  const name = `authz_test_${tpl.template.split('_').pop()}_${randomBytes(6).toString('hex')}`
  await adminQuery(tpl.adminUrl, `CREATE DATABASE ${name} TEMPLATE ${tpl.template}`)
  const url = withDatabase(tpl.adminUrl, name)
  const db = createPgDb({ connectionString: url, max: 5 })
  return {
    db,
    env: { DATABASE_URL: url },
    async close() {
      await db.close()
      await adminQuery(tpl.adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    },
  }
}

/** A second, empty database (no migrations applied): for migration-runner tests. */
export async function createEmptyTestDb(): Promise<TestDb> {
  const tpl = inject('dbTemplate')
  if (tpl.kind === 'pglite') {
    const db = await openSnapshot(tpl.empty.snapshot)
    return { db, env: {}, close: () => db.close() }
  }
  const name = `authz_test_${tpl.template.split('_').pop()}_${randomBytes(6).toString('hex')}`
  await adminQuery(tpl.adminUrl, `CREATE DATABASE ${name}`)
  const url = withDatabase(tpl.adminUrl, name)
  const db = createPgDb({ connectionString: url, max: 5 })
  return {
    db,
    env: { DATABASE_URL: url },
    async close() {
      await db.close()
      await adminQuery(tpl.adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    },
  }
}

/**
 * Embedded only: makes `dataDir` a copy of the migrated template (or of the empty one), for a
 * child process (the server, the CLI) to open. A fresh PGlite initdb in the child costs 10 s or more.
 */
export async function createTestDataDir(dataDir: string, opts: { empty?: boolean } = {}): Promise<string> {
  const tpl = inject('dbTemplate')
  if (tpl.kind !== 'pglite') throw new Error('a DATA_DIR is for the embedded database only')
  await copyDataDir((opts.empty ? tpl.empty : tpl.migrated).dataDir, dataDir)
  return dataDir
}

async function adminQuery(url: string, sql: string) {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    await c.query(sql)
  } finally {
    await c.end()
  }
}
