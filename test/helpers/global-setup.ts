// Migrates once per run, and compiles dist/ for the process tests when it is stale. Embedded: a migrated PGlite data directory, shut down cleanly, that every
// test database starts from (test/helpers/pglite-template.ts), and an empty one for the migration
// runner's tests. DATABASE_URL set: a migrated template database that every test file clones.
import { spawnSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { migrate } from '../../src/db/migrate.js'
import { createPgDb } from '../../src/db/pg.js'
import { createPgliteDb, wrapPglite } from '../../src/db/pglite.js'
import type { Db } from '../../src/db/db.js'
import { generateSigningKey } from '../../src/keys/key-material.js'
import { createPgSigningKeyStore } from '../../src/stores/signing-keys.postgres.js'
import { ROOT } from './built.js'
import { makeTemplate, type PgliteTemplate } from './pglite-template.js'

declare module 'vitest' {
  export interface ProvidedContext {
    dbTemplate: Template
  }
}

type Template = { kind: 'pglite'; migrated: PgliteTemplate; empty: PgliteTemplate } | { kind: 'pg'; adminUrl: string; template: string }

/**
 * Vitest calls a global setup once for the root and once for each project, all in its main
 * process. The template is made once per run and shared through globalThis (module instances are
 * per project); the last teardown removes it.
 */
interface Shared {
  template?: Promise<{ value: Template; teardown: () => Promise<void> }>
  users: number
}
const shared: Shared = ((globalThis as { __authzTestTemplate?: Shared }).__authzTestTemplate ??= { users: 0 })

export default async function setup(project: TestProject) {
  // The root and the unit project use no database.
  if (project.name === '' || project.name === 'unit') return
  // The process project runs the compiled server and CLI (test/helpers/built.ts).
  if (project.name === 'process') buildIfStale()
  shared.users++
  shared.template ??= makeRunTemplate()
  const { value } = await shared.template
  project.provide('dbTemplate', value)
  return async () => {
    if (--shared.users > 0) return
    const made = shared.template
    shared.template = undefined
    await (await made)?.teardown()
  }
}

async function makeRunTemplate(): Promise<{ value: Template; teardown: () => Promise<void> }> {
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
    await addSigningKeys(db)
    await db.close()
    const teardown = async () => {
      // Clones left behind by a crashed worker, then the template itself.
      const { rows } = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [
        `authz_test_${process.pid}_%`,
      ])
      for (const r of rows) await admin.query(`DROP DATABASE IF EXISTS ${r.datname} WITH (FORCE)`)
      await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`)
      await admin.end()
    }
    return { value: { kind: 'pg', adminUrl: url, template }, teardown }
  }

  const dir = await mkdtemp(join(tmpdir(), 'authz-test-'))
  const db = (await createPgliteDb()) as ReturnType<typeof wrapPglite>
  const empty = await makeTemplate(await db.pglite.dumpDataDir('none'), dir, 'empty')
  await migrate(db)
  await addSigningKeys(db)
  const migrated = await makeTemplate(await db.pglite.dumpDataDir('none'), dir, 'migrated')
  await db.close()
  return { value: { kind: 'pglite', migrated, empty }, teardown: () => rm(dir, { recursive: true, force: true }) }
}

/**
 * The signing keys a server creates at its first start (RS256 for ID tokens, ES256 for access
 * tokens), made once per run: an RSA key costs about 100 ms of CPU, and every test database would
 * otherwise make its own. Tests of the first start remove them (test/keys/key-service.test.ts).
 */
async function addSigningKeys(db: Db): Promise<void> {
  const now = Date.now()
  const keys = await Promise.all(
    (['RS256', 'ES256'] as const).map((alg) => generateSigningKey(alg, { createdAt: now, activateAt: now }, undefined)),
  )
  await createPgSigningKeyStore(db).locked(async (w) => {
    for (const key of keys) await w.insert(key)
  })
}

function buildIfStale(): void {
  const res = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'inherit' })
  if (res.status !== 0) throw new Error('the process tests run dist/, and compiling it failed (npm run build)')
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}
