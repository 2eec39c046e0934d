// The admin command `authz` (package.json bin → bin/authz.js → dist/cli.js).
// Parses argv and dispatches through COMMANDS: a new command group is one module in src/cli/
// and one line here. Exit codes: 0 ok, 1 error (one line on stderr), 2 usage error.
import { readFileSync } from 'node:fs'
import { ConfigError } from './config.js'
import { systemClock } from './domain/clock.js'
import { cibaCommand } from './cli/ciba.js'
import { clientsCommand } from './cli/clients.js'
import { consentsCommand } from './cli/consents.js'
import { createContext, UsageError, type CliCommand, type Resources } from './cli/context.js'
import { keysCommand } from './cli/keys.js'
import { migrateCommand } from './cli/migrate.js'
import { providersCommand } from './cli/providers.js'
import { registrationTokensCommand } from './cli/registration-tokens.js'
import { seedCommand } from './cli/seed.js'
import { usersCommand } from './cli/users.js'
import { SeedError } from './seed/errors.js'

export const COMMANDS: readonly CliCommand[] = [
  migrateCommand,
  seedCommand,
  clientsCommand,
  usersCommand,
  keysCommand,
  cibaCommand,
  consentsCommand,
  providersCommand,
  registrationTokensCommand,
]

export function rootUsage(commands: readonly CliCommand[] = COMMANDS): string {
  const width = Math.max(...commands.map((c) => c.name.length))
  return [
    'Usage: authz COMMAND [ARGS] [--help]',
    '       authz --version',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'The database is DATABASE_URL, or the embedded one in DATA_DIR (default ./data) when it is unset.',
    'Run `authz COMMAND --help` for the options of a command.',
  ].join('\n')
}

/** package.json's version: beside src/ in the repository, beside dist/ in the package and image. */
export function version(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version
}

/**
 * True once whoever reads stdout has gone (`authz clients list | head -3`): what is left to print
 * is dropped and the command finishes, closing the database and its lock, instead of dying on
 * EPIPE halfway.
 */
let readerGone = false
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code !== 'EPIPE') throw e
  readerGone = true
})

export async function runCli(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const out = (line: string) => void (readerGone || process.stdout.write(`${line}\n`))
  const err = (line: string) => void process.stderr.write(`${line}\n`)
  const [name, ...args] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    ;(name === undefined ? err : out)(rootUsage())
    return name === undefined ? 2 : 0
  }
  if (name === '--version' || name === '-V') {
    out(`authz ${version()}`)
    return 0
  }
  const command = COMMANDS.find((c) => c.name === name)
  if (!command) {
    err(`authz: unknown command "${name}"\n\n${rootUsage()}`)
    return 2
  }
  if (args.includes('--help') || args.includes('-h')) {
    out(command.usage)
    return 0
  }
  const held: Resources = {}
  try {
    await command.run(args, createContext({ out, err, stdin: process.stdin, clock: systemClock }, env, held))
    return 0
  } catch (e) {
    if (e instanceof UsageError) {
      err(`authz ${name}: ${e.message}\n\n${e.usage}`)
      return 2
    }
    if (e instanceof ConfigError) e.problems.forEach((p) => err(`config error: ${p}`))
    else if (e instanceof SeedError)
      err(e.message) // one line per problem, each with its JSON path
    else err(`authz ${name}: ${e instanceof Error ? e.message : String(e)}`)
    return 1
  } finally {
    await held.db?.close().catch(() => {})
    await held.lock?.release()
  }
}

process.exitCode = await runCli(process.argv.slice(2), process.env)
