// Opens the database the configuration names: a pg Pool for DATABASE_URL, else embedded PGlite
// persisted in DATA_DIR. Shared by the server (src/main.ts) and the admin CLI.
import type { Config } from '../config.js'
import type { Db } from './db.js'
import { createPgDb } from './pg.js'
import { createPgliteDb } from './pglite.js'

export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'databasePoolSize' | 'dataDir'>,
  onError: (err: Error) => void = () => {},
): Promise<Db> {
  if (config.databaseUrl) {
    return createPgDb({ connectionString: config.databaseUrl, max: config.databasePoolSize, onError })
  }
  return createPgliteDb({ dataDir: config.dataDir })
}
