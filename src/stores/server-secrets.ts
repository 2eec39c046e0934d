// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (server-secrets.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.

/** A secret as stored: its value is base64url text, or v1.<iv>.<tag>.<data> when encrypted. */
export interface StoredServerSecret {
  value: string
  encrypted: boolean
}

/** Server-wide secrets shared by every replica (table server_secrets). */
export interface ServerSecretStore {
  /**
   * The stored secret `name`; when there is none, stores `candidate` first. Replicas starting
   * together all get the one that was stored first.
   */
  ensure(name: string, candidate: StoredServerSecret & { createdAt: number }): Promise<StoredServerSecret>
  /**
   * Replaces `name`, if it is still stored unencrypted, by `replacement` (another secret, encrypted);
   * returns what is stored afterwards and whether this call replaced it (of replicas doing this
   * together, one does, and all get its replacement).
   */
  replacePlaintext(
    name: string,
    replacement: StoredServerSecret & { createdAt: number },
  ): Promise<{ stored: StoredServerSecret; replaced: boolean }>
  /**
   * Removes from the database's files the old versions of rows updated so far; false when an
   * older transaction kept that from being complete (see dead-rows.postgres.ts).
   */
  purgeDeadRowVersions(): Promise<boolean>
}
