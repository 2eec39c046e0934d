// authz seed FILE | authz seed --schema (docs/seed-file.md).
import { checkSeed, readSeedFile, SeedError, seedWarningsFor, writeSeed } from '../seed/apply.js'
import { seedJsonSchema } from '../seed/schema.js'
import { parse, UsageError, type CliCommand } from './context.js'

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
    const checked = checkSeed(input)
    // The file's own problems need no database: when it cannot be opened (a server holds the
    // embedded one), they are reported alone; otherwise with those against what is stored.
    const db = await ctx.db().catch((err: unknown) => {
      throw checked.problems.length > 0 ? new SeedError(checked.problems, heading) : err
    })
    // Only an identity provider's client secret is encrypted at rest; the rest needs no configuration.
    const secrets = checked.seed?.identityProviders.some((p) => p.clientSecret !== undefined) ?? false
    const s = await writeSeed(db, input, heading, checked, { keyEncryptionSecret: secrets ? ctx.config().keyEncryptionSecret : undefined })
    ctx.out(
      `seed applied from ${file}: ${s.apiScopes} api scopes, ${s.apiResources} api resources, ` +
        `${s.identityResources} identity resources, ${s.clients} clients, ${s.users} users, ${s.identityProviders} identity providers`,
    )
    for (const warning of checked.seed ? await seedWarningsFor(db, checked.seed) : []) ctx.err(`warning: ${warning}`)
  },
}
