// authz migrate: applies pending migrations (the server does the same at start-up).
import { migrate } from '../db/migrate.js'
import { parse, UsageError, type CliCommand } from './context.js'

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
    const applied = await migrate(await ctx.db({ migrate: false }))
    ctx.out(applied.length > 0 ? `applied migrations: ${applied.join(', ')}` : 'database is up to date')
  },
}
