// A fresh, migrated database for one test file: a PGlite instance loaded from the migrated dump,
// or a clone of the migrated template on the server named by DATABASE_URL.
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import pg from 'pg'
import { inject } from 'vitest'
import type { Db } from '../../src/db/db.js'
import { createPgDb } from '../../src/db/pg.js'
import { createPgliteDb } from '../../src/db/pglite.js'
import { withDatabase } from './global-setup.js'

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
    const data = await readFile(tpl.dumpFile)
    const db = await createPgliteDb({ loadDataDir: new Blob([data]) })
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
    const db = await createPgliteDb({ loadDataDir: new Blob([await readFile(tpl.emptyDumpFile)]) })
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

async function adminQuery(url: string, sql: string) {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    await c.query(sql)
  } finally {
    await c.end()
  }
}
