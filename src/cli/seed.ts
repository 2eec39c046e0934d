// authz seed FILE | authz seed --schema (docs/seed-file.md).
import { ADMIN_SEED_PATH } from '../endpoints.js'
import { checkSeed, readSeedFile, SeedError, seedWarningsFor, writeSeed, type SeedSummary } from '../seed/apply.js'
import { seedJsonSchema } from '../seed/schema.js'
import { errorsOf, seedLines, unexpected, type AdminApi } from './admin-api.js'
import { parse, UsageError, type CliCommand, type CliContext } from './context.js'

const usage = `Usage: authz seed FILE
       authz seed --schema

Applies a seed file (JSON: apiScopes, apiResources, identityResources, clients, users,
identityProviders) in one
transaction, as an idempotent upsert keyed by clientId / name / username / scheme. An invalid file changes
nothing; every problem is printed at once, each with its JSON path.

Options:
  --schema   print the JSON Schema of the seed file and exit
  --help     show this help`

export const seedCommand: CliCommand = {
  name: 'seed',
  summary: 'apply a seed file, or print its JSON Schema (--schema)',
  usage,
  async run(args, ctx) {
    const { values, positionals } = parse(args, { schema: { type: 'boolean' } }, usage)
    if (values.schema) {
      if (positionals.length > 0) throw new UsageError('--schema takes no file', usage)
      ctx.out(JSON.stringify(seedJsonSchema(), null, 2))
      return
    }
    const [file, ...rest] = positionals
    if (!file || rest.length > 0) throw new UsageError('expected exactly one FILE', usage)
    const heading = `invalid seed file ${file}`
    const input = await readSeedFile(file)
    const api = await ctx.server?.()
    if (api) return applyThrough(api, file, input, heading, ctx)
    const checked = checkSeed(input)
    // The file's own problems need no database: when it cannot be opened (a server holds the
    // embedded one), they are reported alone; otherwise with those against what is stored.
    const db = await ctx.db().catch((err: unknown) => {
      throw checked.problems.length > 0 ? new SeedError(checked.problems, heading) : err
    })
    // Only an identity provider's client secret is encrypted at rest; the rest needs no configuration.
    const secrets = checked.seed?.identityProviders.some((p) => p.clientSecret !== undefined) ?? false
    const s = await writeSeed(db, input, heading, checked, { keyEncryptionSecret: secrets ? ctx.config().keyEncryptionSecret : undefined })
    printApplied(ctx, file, s, checked.seed ? await seedWarningsFor(db, checked.seed) : [])
  },
}

function printApplied(ctx: CliContext, file: string, s: SeedSummary, warnings: string[]) {
  ctx.out(
    `seed applied from ${file}: ${s.apiScopes} api scopes, ${s.apiResources} api resources, ` +
      `${s.identityResources} identity resources, ${s.clients} clients, ${s.users} users, ${s.identityProviders} identity providers`,
  )
  for (const warning of warnings) ctx.err(`warning: ${warning}`)
}

/** PUT /admin/seed of the running server: the same checks in one transaction, its problems as the same lines. */
async function applyThrough(api: AdminApi, file: string, input: unknown, heading: string, ctx: CliContext) {
  const answer = await api.call('PUT', ADMIN_SEED_PATH, { body: input })
  if (answer.status === 400) throw new SeedError(seedLines(errorsOf(answer), ''), heading)
  if (answer.status !== 200) throw unexpected(answer)
  const { warnings, ...summary } = answer.body as SeedSummary & { warnings: string[] }
  printApplied(ctx, file, summary, warnings)
}
