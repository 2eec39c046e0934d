// authz seed FILE | authz seed --schema (docs/seed-file.md).
import { readSeedFile, seedWarnings, validateSeed, writeSeed } from '../seed/apply.js'
import { seedJsonSchema } from '../seed/schema.js'
import { parse, UsageError, type CliCommand } from './context.js'

const usage = `Usage: authz seed FILE
       authz seed --schema

Applies a seed file (JSON: apiScopes, apiResources, identityResources, clients, users) in one
transaction, as an idempotent upsert keyed by clientId / name / username. An invalid file changes
nothing; each problem is printed with its JSON path.

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
    // Validate before opening the database: a typo needs no database to be reported.
    const heading = `invalid seed file ${file}`
    const seed = validateSeed(await readSeedFile(file), heading)
    const s = await writeSeed(await ctx.db(), seed, heading)
    ctx.out(
      `seed applied from ${file}: ${s.apiScopes} api scopes, ${s.apiResources} api resources, ` +
        `${s.identityResources} identity resources, ${s.clients} clients, ${s.users} users`,
    )
    for (const warning of seedWarnings(seed)) ctx.err(`warning: ${warning}`)
  },
}
