// CONTRACT (to be implemented by the seed work): applies a seed file (DESIGN.md "Seed file") in one transaction.
import type { Db } from '../db/db.js'

export interface SeedSummary {
  clients: number
  apiScopes: number
  apiResources: number
  identityResources: number
  users: number
}

export async function applySeedFile(_db: Db, _path: string): Promise<SeedSummary> {
  throw new Error('not implemented yet')
}
