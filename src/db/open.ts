// Opens the database the configuration names: a pg Pool for DATABASE_URL, else embedded PGlite
// persisted in DATA_DIR. Shared by the server (src/main.ts) and the admin CLI.
import type { Config } from '../config.js'
import type { Db } from './db.js'
import { createPgDb } from './pg.js'
import { createPgliteDb } from './pglite.js'

export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'databasePoolSize' | 'dataDir'> &
    Partial<Pick<Config, 'databaseConnectTimeout' | 'embeddedSharedBuffers'>>,
  onError: (err: Error) => void = () => {},
): Promise<Db> {
  if (config.databaseUrl) {
    const connectTimeoutMs = config.databaseConnectTimeout === undefined ? undefined : Math.round(config.databaseConnectTimeout * 1000)
    const db = createPgDb({
      connectionString: config.databaseUrl,
      max: config.databasePoolSize,
      onError,
      ...(connectTimeoutMs ? { connectTimeoutMs } : {}),
    })
    // Connect once now, so that a wrong address or password fails here with a message naming the
    // variable rather than later inside whatever query came first.
    try {
      await db.query('SELECT 1')
    } catch (err) {
      await db.close().catch(() => {})
      throw new DatabaseConnectionError(config.databaseUrl, err)
    }
    return db
  }
  return createPgliteDb({
    dataDir: config.dataDir,
    ...(config.embeddedSharedBuffers ? { sharedBuffers: config.embeddedSharedBuffers } : {}),
  })
}

/** The URL as it may be shown: the password replaced by ***. */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return 'postgres://…'
  }
}

export class DatabaseConnectionError extends Error {
  override readonly name = 'DatabaseConnectionError'
  constructor(url: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message || (cause as NodeJS.ErrnoException).code || cause.name : String(cause)
    let password = ''
    try {
      password = decodeURIComponent(new URL(url).password)
    } catch {
      // A URL that does not parse (or a password that does not decode) has nothing to hide.
    }
    const safe = password ? reason.split(password).join('***') : reason
    super(`cannot connect to the database at DATABASE_URL (${redactDatabaseUrl(url)}): ${safe}`, { cause })
  }
}
