// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (signing-keys.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.
import type { SigningAlg } from '../config.js'

/**
 * A row of signing_keys. privateJwk is JSON text, or v1.<iv>.<tag>.<data> when encrypted;
 * undefined once erased (the key was superseded: it only verifies, until retireAt).
 */
export interface StoredSigningKey {
  kid: string
  alg: SigningAlg
  publicJwk: Record<string, unknown>
  privateJwk: string | undefined
  encrypted: boolean
  createdAt: number
  activateAt: number
  retireAt: number | undefined
}

/** Writes allowed inside SigningKeyStore.locked(): one transaction, one replica at a time. */
export interface SigningKeyWriter {
  /** Algorithms that have a key not scheduled for retirement (the newest key of each alg). */
  unretiredAlgs(): Promise<SigningAlg[]>
  insert(key: StoredSigningKey): Promise<void>
  /** Schedules retirement of every other key of `alg` that has none scheduled; returns how many. */
  retireOthers(alg: SigningAlg, keepKid: string, retireAt: number): Promise<number>
  /** The longest access_token_lifetime any client has (seconds), undefined when none sets one. */
  maxClientAccessTokenLifetime(): Promise<number | undefined>
  /** Every key, as the lock holder sees them. */
  list(): Promise<StoredSigningKey[]>
  /** Replaces a plaintext private part with its encrypted form (no-op once encrypted). */
  storeEncrypted(kid: string, encryptedJwk: string): Promise<void>
}

export interface SigningKeyStore {
  /** Every key, or only those still published at `publishedAt` (retire_at unset or later). */
  list(publishedAt?: number): Promise<StoredSigningKey[]>
  /** Runs fn in one transaction under an advisory lock, so replicas never create or rotate keys twice. */
  locked<T>(fn: (w: SigningKeyWriter) => Promise<T>): Promise<T>
  /** Deletes at most `limit` keys retired (unpublished) before `before`; returns their kids. */
  removeRetired(before: number, limit: number): Promise<string[]>
  /**
   * Erases the private part of every key superseded at `at`: a newer key of its alg (later
   * activate_at, or the same and later created_at) has activated by then. Returns their kids.
   */
  erasePrivateParts(at: number): Promise<string[]>
  /**
   * Removes from the database's files the old versions of rows updated or deleted so far; false
   * when an older transaction kept that from being complete (see dead-rows.postgres.ts).
   */
  purgeDeadRowVersions(): Promise<boolean>
}
