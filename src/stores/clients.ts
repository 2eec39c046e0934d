// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (clients.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.
import type { Client } from '../domain/types.js'

export interface ClientStore {
  findById(clientId: string): Promise<Client | undefined>
  list(): Promise<Client[]>
  /** Every origin that some enabled client lists in allowedCorsOrigins. */
  corsOrigins(): Promise<string[]>
  /** Deletes the client and its secrets; false when there was none. */
  remove(clientId: string): Promise<boolean>
  /** Adds a hashed secret; false when the client does not exist. */
  addSecret(clientId: string, secret: { valueHash: string; expiresAt?: number; description?: string }): Promise<boolean>
  /** Enables or disables the client (admin CLI); false when it does not exist. */
  setEnabled(clientId: string, enabled: boolean): Promise<boolean>
}
