// authz migrate: applies pending migrations (the server does the same at start-up). While a server
// runs on the embedded database it holds DATA_DIR and has applied its own migrations; this command
// then asks it (GET /admin/migrations) and reports what this version would still apply, which
// only a restart on this version can (PGlite is single-process).
import { ADMIN_MIGRATIONS_PATH } from '../endpoints.js'
import { loadMigrations, migrate, pendingOf } from '../db/migrate.js'
import { unexpected } from './admin-api.js'
import { CliError, parse, UsageError, type CliCommand } from './context.js'

const usage = `Usage: authz migrate

Applies pending database migrations (migrations/NNNN_*.sql) in order, under an advisory lock.
The server and every other command migrate on their own; this is for deploy pipelines.`

export const migrateCommand: CliCommand = {
  name: 'migrate',
  summary: 'apply pending database migrations',
  usage,
  async run(args, ctx) {
    const { positionals } = parse(args, {}, usage)
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`, usage)
    const api = await ctx.server?.()
    if (api) {
      const answer = await api.call('GET', ADMIN_MIGRATIONS_PATH)
      if (answer.status !== 200) throw unexpected(answer)
      const applied = (answer.body as { items: { version: string; checksum: string }[] }).items
      const pending = pendingOf(new Map(applied.map((m) => [m.version, m.checksum])), await loadMigrations())
      if (pending.length === 0) return ctx.out('database is up to date')
      throw new CliError(
        `the server running on DATA_DIR has not applied migrations ${pending.join(', ')} of this version: stop it and start this version, which applies them at start`,
      )
    }
    const applied = await migrate(await ctx.db({ migrate: false }))
    ctx.out(applied.length > 0 ? `applied migrations: ${applied.join(', ')}` : 'database is up to date')
  },
}
