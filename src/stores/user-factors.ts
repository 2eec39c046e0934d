// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (user-factors.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.
// Secrets arrive and leave in their stored form (encrypted when KEY_ENCRYPTION_SECRET is set:
// src/interaction/second-factor.ts), recovery codes only as hashes.

/** A person's second factors (migrations/0040_second_factors.sql). */
export interface StoredFactors {
  /** The confirmed one-time code factor; undefined: none. */
  totp: { secret: string; confirmedAt: number; lastUsedAt: number | undefined } | undefined
  /** A secret shown for enrolment and not yet confirmed. */
  pending: { secret: string; createdAt: number } | undefined
  /** Recovery codes not yet used. */
  recoveryCodesLeft: number
}

export interface UserFactorStore {
  /** The person's factors; undefined when they have none and no enrolment is under way. */
  find(subjectId: string): Promise<StoredFactors | undefined>
  /** Whether the person has a confirmed second factor (the sign-in's cheap question). */
  hasFactor(subjectId: string): Promise<boolean>
  /** Keeps `secret` as the enrolment under way, replacing an earlier one (a confirmed factor stays). */
  setPending(subjectId: string, secret: string, now: number): Promise<void>
  /**
   * Makes the pending secret the person's factor, records `step` as used and replaces the recovery
   * codes with `codeHashes`, in one statement; false when no enrolment was pending (or it changed
   * since it was read: `pendingSecret` must still be the one pending).
   */
  confirm(subjectId: string, pendingSecret: string, step: number, codeHashes: string[], now: number): Promise<boolean>
  /** Records `step` as used, only when it is later than the last one used (RFC 6238 §5.2): true once per step. */
  useStep(subjectId: string, step: number, now: number): Promise<boolean>
  /** Spends the unused recovery code with this hash: true once. */
  useRecoveryCode(subjectId: string, codeHash: string, now: number): Promise<boolean>
  /** Replaces every recovery code; false when the person has no confirmed factor. */
  replaceRecoveryCodes(subjectId: string, codeHashes: string[], now: number): Promise<boolean>
  /** Removes every factor and recovery code (and an enrolment under way); false when there was nothing. */
  remove(subjectId: string): Promise<boolean>
}
