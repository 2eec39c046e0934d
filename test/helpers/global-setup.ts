// Migrates once per run. Embedded: a migrated PGlite data dir is dumped to a file that every
// test file loads (~0.4 s instead of ~3.5 s for a fresh instance plus migrations).
// DATABASE_URL set: a migrated template database that every test file clones.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { migrate } from '../../src/db/migrate.js'
import { createPgDb } from '../../src/db/pg.js'
import { createPgliteDb, wrapPglite } from '../../src/db/pglite.js'

declare module 'vitest' {
  export interface ProvidedContext {
    dbTemplate: { kind: 'pglite'; dumpFile: string; emptyDumpFile: string } | { kind: 'pg'; adminUrl: string; template: string }
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
  const dumpTo = async (file: string) => {
    const dump = await db.pglite.dumpDataDir('none')
    await writeFile(file, Buffer.from(await dump.arrayBuffer()))
    return file
  }
  const emptyDumpFile = await dumpTo(join(dir, 'empty.tar'))
  await migrate(db)
  const dumpFile = await dumpTo(join(dir, 'migrated.tar'))
  await db.close()
  project.provide('dbTemplate', { kind: 'pglite', dumpFile, emptyDumpFile })
  return () => rm(dir, { recursive: true, force: true })
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}
