// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (passkeys.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.

/** A passkey (a WebAuthn public-key credential) of a person (migrations/0041_passkeys.sql). */
export interface Passkey {
  /** base64url */
  credentialId: string
  subjectId: string
  /** COSE_Key (WebAuthn §6.5.1.1) */
  publicKey: Uint8Array<ArrayBuffer>
  counter: number
  transports: string[]
  /** BE: a synced, multi-device credential. */
  backupEligible: boolean
  /** BS, as last reported. */
  backedUp: boolean
  aaguid: string
  name: string
  /** ms */
  createdAt: number
  lastUsedAt: number | undefined
}

/** The longest name a person may give a passkey. */
export const PASSKEY_NAME_MAX = 100

export interface PasskeyStore {
  findById(credentialId: string): Promise<Passkey | undefined>
  /** The person's passkeys, the oldest first. */
  listForSubject(subjectId: string): Promise<Passkey[]>
  /** Adds the passkey; false when its credential id is registered already (to anyone). */
  add(passkey: Passkey): Promise<boolean>
  /**
   * Records a sign-in with it: the new counter and backup state, and when. False when the stored
   * counter moved on since it was read (a concurrent use of a cloned authenticator).
   */
  recordUse(credentialId: string, use: { previousCounter: number; counter: number; backedUp: boolean; at: number }): Promise<boolean>
  /** Removes one of the person's passkeys; false when they have none with that id. */
  remove(subjectId: string, credentialId: string): Promise<boolean>
  /** Removes every passkey of the person (an operator's reset of their factors); how many there were. */
  removeAllForSubject(subjectId: string): Promise<number>
}
