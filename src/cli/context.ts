// What every admin command gets: output streams, stdin, lazily loaded config and database.
// The database is opened once per run (embedded: under the DATA_DIR lock) and migrated first.
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { loadConfig, type Config } from '../config.js'
import type { Db } from '../db/db.js'
import { acquireDataDirLock, type DataDirLock } from '../db/data-dir-lock.js'
import { migrate } from '../db/migrate.js'
import { openDatabase } from '../db/open.js'
import type { Clock } from '../domain/clock.js'

export interface CliCommand {
  name: string
  /** One line for the root usage. */
  summary: string
  /** The full `--help` text. */
  usage: string
  run(args: string[], ctx: CliContext): Promise<void>
}

export type Subcommand = (args: string[], ctx: CliContext) => Promise<void>

/** A command group (`authz NAME SUB …`): dispatches to its subcommands, usage errors for the rest. */
export function commandGroup(spec: Omit<CliCommand, 'run'> & { subcommands: Record<string, Subcommand> }): CliCommand {
  const { subcommands, ...command } = spec
  return {
    ...command,
    async run(args, ctx) {
      const [sub, ...rest] = args
      const fn = sub !== undefined && Object.hasOwn(subcommands, sub) ? subcommands[sub] : undefined
      if (!fn) throw new UsageError(sub === undefined ? 'missing subcommand' : `unknown subcommand "${sub}"`, command.usage)
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

export function createContext(
  io: Pick<CliContext, 'out' | 'err' | 'stdin' | 'clock'>,
  env: Record<string, string | undefined>,
  held: Resources,
): CliContext {
  let config: Config | undefined
  let migrated = false
  const ctx: CliContext = {
    ...io,
    config: () => (config ??= loadConfig(env)),
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
