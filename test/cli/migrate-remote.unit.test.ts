// authz migrate while a server runs on the embedded database: it asks the server what is applied
// (GET /admin/migrations) and says what this version would still apply, since only a restart on
// this version can apply it there; a changed migration file is refused as the database form does.
import { describe, expect, it } from 'vitest'
import type { AdminApi } from '../../src/cli/admin-api.js'
import { CliError, type CliContext } from '../../src/cli/context.js'
import { migrateCommand } from '../../src/cli/migrate.js'
import { loadMigrations, MigrationError } from '../../src/db/migrate.js'
import { systemClock } from '../../src/domain/clock.js'

function contextWith(items: { version: string; name: string; checksum: string }[]) {
  const out: string[] = []
  const calls: string[] = []
  const api: AdminApi = {
    async call(method, path) {
      calls.push(`${method} ${path}`)
      return { status: 200, body: { items }, etag: undefined }
    },
  }
  const ctx = {
    out: (l: string) => out.push(l),
    err: () => {},
    stdin: process.stdin,
    clock: systemClock,
    config: () => {
      throw new Error('not read')
    },
    db: () => Promise.reject(new Error('the database is held by the server')),
    server: async () => api,
  } as unknown as CliContext
  return { ctx, out, calls }
}

describe('authz migrate through a running embedded server', () => {
  it('reports the database up to date when the server applied every migration of this version', async () => {
    const files = await loadMigrations()
    const { ctx, out, calls } = contextWith(files.map((m) => ({ version: m.version, name: m.name, checksum: m.checksum })))
    await migrateCommand.run([], ctx)
    expect(calls).toEqual(['GET /admin/migrations'])
    expect(out).toEqual(['database is up to date'])
  })

  it('names the migrations the running server lacks and says how to apply them', async () => {
    const files = await loadMigrations()
    const older = files.slice(0, -2).map((m) => ({ version: m.version, name: m.name, checksum: m.checksum }))
    const { ctx } = contextWith(older)
    const lacking = files.slice(-2).map((m) => m.version)
    await expect(migrateCommand.run([], ctx)).rejects.toThrow(
      new CliError(
        `the server running on DATA_DIR has not applied migrations ${lacking.join(', ')} of this version: stop it and start this version, which applies them at start`,
      ),
    )
  })

  it('refuses a migration file changed after the server applied it', async () => {
    const files = await loadMigrations()
    const { ctx } = contextWith(
      files.map((m, i) => ({ version: m.version, name: m.name, checksum: i === 0 ? 'x'.repeat(64) : m.checksum })),
    )
    await expect(migrateCommand.run([], ctx)).rejects.toThrow(MigrationError)
  })
})
