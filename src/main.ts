// The server process: config, database, migrations, seed, buildApp, listen, graceful shutdown.
// The only module that reads process.env.
import { relative } from 'node:path'
import { buildApp } from './app.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { migrate } from './db/migrate.js'
import { acquireDataDirLock } from './db/data-dir-lock.js'
import { openDatabase } from './db/open.js'
import { closeAfterDrain, startDrain } from './http/edge.js'
import { nodeEndOfLifeWarning } from './domain/node-support.js'
import { createLogger } from './http/logger.js'
import { checkSeed, readSeedFile, seedWarningsFor, validateSeed, writeSeed } from './seed/apply.js'
import { DEMO_SEED_FILE } from './seed/paths.js'
import { demoBanner, seedPlan } from './seed/startup.js'
import { configurePasswordHashing } from './interaction/passwords.js'

/** Applied only to a database that had no schema before this start. */
const FIRST_MIGRATION = '0001'

async function main() {
  let config: Config
  try {
    config = loadConfig(process.env, { terminal: process.stdout.isTTY })
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    for (const line of err.problems) process.stderr.write(`config error: ${line}\n`)
    process.exit(1)
  }

  configurePasswordHashing(config.passwordHashCost)
  const logger = createLogger({ level: config.logLevel, format: config.logFormat })
  const endOfLife = nodeEndOfLifeWarning(process.version, new Date())
  if (endOfLife) logger.warn({ node: process.version }, endOfLife)
  // The seed is read and checked before anything is migrated: a typo changes nothing at all.
  const seedFile = config.seedFile ?? (config.demoSeed ? DEMO_SEED_FILE : undefined)
  const seedHeading = `invalid seed file ${seedFile}`
  const seed = seedFile ? validateSeed(await readSeedFile(seedFile), seedHeading) : undefined
  // Embedded PGlite is single-process: hold DATA_DIR so the admin CLI cannot open it meanwhile.
  const dataDirLock = config.databaseUrl ? undefined : await acquireDataDirLock(config.dataDir)
  const db = await openDatabase(config, (err) => logger.warn({ err }, 'database connection error'))
  const applied = await migrate(db)
  if (applied.length > 0) logger.info({ applied }, 'migrations applied')

  // SEED_FILE applies at every start, the demo seed only to a database this start created
  // (src/seed/startup.ts); either way the log says what was done and why.
  const plan = seedPlan(config, applied.includes(FIRST_MIGRATION), relative(process.cwd(), DEMO_SEED_FILE))
  if (seed && plan.apply) {
    const summary = await writeSeed(db, seed, seedHeading, checkSeed(seed), { keyEncryptionSecret: config.keyEncryptionSecret })
    logger.info({ seedFile, reason: plan.reason, ...summary }, 'seed applied')
    for (const warning of await seedWarningsFor(db, seed)) logger.warn({ seedFile }, warning)
  } else if (!plan.apply) {
    logger.info(plan.message)
  }
  if (!config.keyEncryptionSecret) {
    logger.warn(
      config.databaseUrl
        ? 'KEY_ENCRYPTION_SECRET is not set: signing keys are stored unencrypted in the database'
        : 'KEY_ENCRYPTION_SECRET is not set: signing keys are stored unencrypted in DATA_DIR',
    )
  }

  const app = await buildApp({ config, db, logger })
  // The embedded database serves this process alone: the CLI administers it through the server.
  // Ready before the public port, so that a server seen listening can be administered at once.
  if (!config.databaseUrl) await app.authz.listenLocalAdmin(config.dataDir)
  await app.listen({ port: config.port, host: config.host })
  if (seed && config.demoSeed) {
    // The demo's credentials are public (README), but a log collector is no place for passwords:
    // the banner is for a person at a terminal.
    if (config.logFormat === 'pretty') logger.info({ banner: demoBanner(config.issuer, seed) }, 'authz is ready, with the demo seed')
    else logger.info('authz is ready, with the demo seed: its credentials are in the README (Demo credentials)')
  }
  await app.authz.listenMetrics() // METRICS_HOST:METRICS_PORT when set; closed with the app
  await app.authz.listenAdmin() // ADMIN_HOST:ADMIN_PORT when set; closed with the app

  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal, drainSeconds: config.shutdownDrain }, 'shutting down')
    // Drain first (src/http/edge.ts): keep answering, each answer with Connection: close, so that
    // keep-alive clients leave without a reset. Then stop accepting and let in-flight requests
    // finish, but never wait longer than the bound (counted from the signal).
    const timer = setTimeout(() => {
      logger.error({ timeoutSeconds: config.shutdownTimeout }, 'shutdown timed out; exiting')
      process.exit(1)
    }, config.shutdownTimeout * 1000)
    timer.unref()
    try {
      startDrain(app)
      await new Promise((resolve) => setTimeout(resolve, config.shutdownDrain * 1000))
      await closeAfterDrain(app)
      await db.close()
      await dataDirLock?.release()
      logger.info('stopped')
      process.exit(0)
    } catch (err) {
      logger.error({ err }, 'shutdown failed')
      process.exit(1)
    }
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}

main().catch((err: unknown) => {
  // Start-up failed (database unreachable, migration checksum mismatch, invalid seed file…):
  // one readable line, exit 1.
  process.stderr.write(`authz failed to start: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
