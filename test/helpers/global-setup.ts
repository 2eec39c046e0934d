// Migrates once per run. Embedded: a migrated PGlite data directory, shut down cleanly, that every
// test database starts from (test/helpers/pglite-template.ts), and an empty one for the migration
// runner's tests. DATABASE_URL set: a migrated template database that every test file clones.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { migrate } from '../../src/db/migrate.js'
import { createPgDb } from '../../src/db/pg.js'
import { createPgliteDb, wrapPglite } from '../../src/db/pglite.js'
import { makeTemplate, type PgliteTemplate } from './pglite-template.js'

declare module 'vitest' {
  export interface ProvidedContext {
    dbTemplate: { kind: 'pglite'; migrated: PgliteTemplate; empty: PgliteTemplate } | { kind: 'pg'; adminUrl: string; template: string }
  }
}

export default async function setup(project: TestProject) {
  // The unit project uses no database: a run of it alone (npm test -- --project unit) skips this.
  if (project.vitest.projects.every((p) => p.name === 'unit')) return
  const url = process.env.DATABASE_URL
  if (url) {
    const template = `authz_test_tpl_${process.pid}`
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    await admin.query(`DROP DATABASE IF EXISTS ${template}`)
    await admin.query(`CREATE DATABASE ${template}`)
    const tplUrl = withDatabase(url, template)
    const db = createPgDb({ connectionString: tplUrl, max: 1 })
    await migrate(db)
    await db.close()
    project.provide('dbTemplate', { kind: 'pg', adminUrl: url, template })
    return async () => {
      // Clones left behind by a crashed worker, then the template itself.
      const { rows } = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [
        `authz_test_${process.pid}_%`,
      ])
      for (const r of rows) await admin.query(`DROP DATABASE IF EXISTS ${r.datname} WITH (FORCE)`)
      await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`)
      await admin.end()
    }
  }

  const dir = await mkdtemp(join(tmpdir(), 'authz-test-'))
  const db = (await createPgliteDb()) as ReturnType<typeof wrapPglite>
  const empty = await makeTemplate(await db.pglite.dumpDataDir('none'), dir, 'empty')
  await migrate(db)
  const migrated = await makeTemplate(await db.pglite.dumpDataDir('none'), dir, 'migrated')
  await db.close()
  project.provide('dbTemplate', { kind: 'pglite', migrated, empty })
  return () => rm(dir, { recursive: true, force: true })
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}
