// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (consents.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.

/** A user's remembered consent for one client (OpenID Connect Core §3.1.2.4). */
export interface Consent {
  subjectId: string
  clientId: string
  /** In the order first granted. */
  scopes: string[]
  createdAt: number
  /** The last time the user granted (any of) these scopes. */
  updatedAt: number
}

/** Consents, per user and client, until revoked. */
export interface ConsentStore {
  /**
   * Adds `scopes` to the user's consent for the client in one statement (a union with what is
   * stored), creating it when there is none; returns the consent as stored.
   */
  grant(subjectId: string, clientId: string, scopes: string[], at: number): Promise<Consent>
  find(subjectId: string, clientId: string): Promise<Consent | undefined>
  /** The user's consents, by client id. */
  list(subjectId: string): Promise<Consent[]>
  /** Removes the consent for one client, or for every client when clientId is omitted; returns how many. */
  revoke(subjectId: string, clientId?: string): Promise<number>
}
