// What every admin command gets: output streams, stdin, lazily loaded config and database, and
// the running server's admin API. The database is opened once per run (embedded: under the
// DATA_DIR lock) and migrated first. On the embedded database, while a server holds DATA_DIR,
// a subcommand with a remote form runs that instead, through the server's admin API
// (src/cli/admin-api.ts), printing what the database form prints; one without keeps being refused
// by the lock (stop the server, or add its remote form: one entry in the group's `remote`).
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { loadConfig, type Config } from '../config.js'
import { localAdminApi, type AdminApi } from './admin-api.js'
import type { Db } from '../db/db.js'
import { acquireDataDirLock, type DataDirLock } from '../db/data-dir-lock.js'
import { migrate } from '../db/migrate.js'
import { openDatabase } from '../db/open.js'
import type { Clock } from '../domain/clock.js'
import { configurePasswordHashing } from '../interaction/passwords.js'

export interface CliCommand {
  name: string
  /** One line for the root usage. */
  summary: string
  /** The full `--help` text. */
  usage: string
  run(args: string[], ctx: CliContext): Promise<void>
}

export type Subcommand = (args: string[], ctx: CliContext) => Promise<void>

/** A subcommand through the running server's admin API: the same arguments, errors and output as its database form. */
export type RemoteSubcommand = (args: string[], ctx: CliContext, api: AdminApi) => Promise<void>

/**
 * A command group (`authz NAME SUB …`): dispatches to its subcommands, usage errors for the rest;
 * to the remote form of one when a server runs on the embedded database.
 */
export function commandGroup(
  spec: Omit<CliCommand, 'run'> & { subcommands: Record<string, Subcommand>; remote?: Record<string, RemoteSubcommand> },
): CliCommand {
  const { subcommands, remote = {}, ...command } = spec
  return {
    ...command,
    async run(args, ctx) {
      const [sub, ...rest] = args
      const fn = sub !== undefined && Object.hasOwn(subcommands, sub) ? subcommands[sub] : undefined
      if (!fn) throw new UsageError(sub === undefined ? 'missing subcommand' : `unknown subcommand "${sub}"`, command.usage)
      const through = Object.hasOwn(remote, sub!) ? remote[sub!] : undefined
      const api = through ? await ctx.server?.() : undefined
      if (through && api) return through(rest, ctx, api)
      await fn(rest, ctx)
    },
  }
}

export interface CliContext {
  out(line: string): void
  err(line: string): void
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown }
  clock: Clock
  config(): Config
  /** The database, migrated unless `migrate: false`. */
  db(opts?: { migrate?: boolean }): Promise<Db>
  /**
   * The admin API of the server running on the embedded database in DATA_DIR; undefined: none
   * runs, or DATABASE_URL is set. Absent in a context without one (tests calling a command directly).
   */
  server?(): Promise<AdminApi | undefined>
}

/** Exit 1 with this one line on stderr. */
export class CliError extends Error {
  override readonly name = 'CliError'
}

/** Exit 2 with the command's usage on stderr. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message)
  }
}

/** parseArgs, strict, with parse failures turned into a UsageError naming the command's usage. */
export function parse<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O, usage: string) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: true })
  } catch (err) {
    throw new UsageError((err as Error).message, usage)
  }
}

export interface Resources {
  db?: Db
  lock?: DataDirLock
}

/** The CLI hashes passwords (users add, seed) at the server's cost. */
function withPasswordHashing(config: Config): Config {
  configurePasswordHashing(config.passwordHashCost)
  return config
}

export function createContext(
  io: Pick<CliContext, 'out' | 'err' | 'stdin' | 'clock'>,
  env: Record<string, string | undefined>,
  held: Resources,
): CliContext {
  let config: Config | undefined
  let migrated = false
  let server: Promise<AdminApi | undefined> | undefined
  const ctx: CliContext = {
    ...io,
    config: () => (config ??= withPasswordHashing(loadConfig(env))),
    async db(opts = {}) {
      const cfg = ctx.config()
      if (!held.db) {
        // PGlite is single-process: never open a DATA_DIR a running server holds.
        if (!cfg.databaseUrl) held.lock = await acquireDataDirLock(cfg.dataDir)
        held.db = await openDatabase(cfg)
      }
      if (opts.migrate !== false && !migrated) {
        await migrate(held.db)
        migrated = true
      }
      return held.db
    },
    server() {
      return (server ??= (async () => {
        let cfg: Config
        try {
          cfg = ctx.config()
        } catch {
          return undefined // the database form reports the configuration's problems, as without a server
        }
        // PostgreSQL serves every process: the CLI writes it directly, and every replica hears of it (NOTIFY).
        return cfg.databaseUrl ? undefined : localAdminApi(cfg.dataDir)
      })())
    },
  }
  return ctx
}

/** Fixed-width columns for human output. */
export function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ')
  return [line(header), ...rows.map(line)]
}

export const isoOrNull = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString())
