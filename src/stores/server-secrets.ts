// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (server-secrets.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.

/** Server-wide secrets shared by every replica (table server_secrets). */
export interface ServerSecretStore {
  /**
   * The stored secret `name`; when there is none, stores `candidate` first. Replicas starting
   * together all get the one that was stored first.
   */
  ensure(name: string, candidate: { value: string; encrypted: boolean; createdAt: number }): Promise<{ value: string; encrypted: boolean }>
  /** Replaces the plaintext value of `name` with its encrypted form (no-op once encrypted). */
  storeEncrypted(name: string, encryptedValue: string): Promise<void>
}
