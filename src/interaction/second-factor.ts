// Second factors: one-time codes (TOTP, RFC 6238) and their recovery codes. The one place that
// makes, keeps and checks them; the pages (src/flows/second-factor) and the CLI only call it.
//
// TOTP as every authenticator app reads it (RFC 6238 §4 with the otpauth:// key URI): HMAC-SHA-1,
// 6 digits, 30-second steps, a 160-bit secret (RFC 4226 §4 R6 recommends 160 bits); a code is
// accepted in the step before, the step of, and the step after the server's time (RFC 6238
// §5.2's allowance for drift), and only once: the step of the last code accepted is stored, and
// no code of that step or an earlier one is accepted again. The secret is encrypted at rest under
// KEY_ENCRYPTION_SECRET when it is set (src/keys/key-crypto.ts, bound to the person's subject).
//
// Recovery codes (NIST SP 800-63B §5.1.2, look-up secrets): ten at a time, each 80 random bits,
// shown once and stored only as a SHA-256 (an 80-bit secret cannot be guessed from its hash in
// any useful time, like a handle), each usable once; a new set replaces every earlier code.
//
// Every check counts toward the same lockout as the password (src/interaction/password-check.ts):
// the failure is counted BEFORE the code is checked, under the account's own failure counter, so
// wrong codes and wrong passwords add up to the one threshold, and a right password between them
// does not reset it (password-check.ts keeps the counter of a person with a second factor); only
// the right second factor does.
import { createHash, randomBytes } from 'node:crypto'
import type { Clock } from '../domain/clock.js'
import type { User } from '../domain/types.js'
import { decryptAtRest, encryptAtRest, KeyDecryptionError } from '../keys/key-crypto.js'
import type { AuditSink } from '../observe/audit.js'
import type { FailureCounterStore, FailureKey, FailurePolicy } from '../stores/failure-counters.js'
import type { UserFactorStore } from '../stores/user-factors.js'

/** The one-time code and QR code libraries, loaded at first use: a server whose users enrol no
 * second factor never pays for them. */
const otp = () => import('otplib')
const qrcode = () => import('qrcode')

/** Exactly this many recovery codes are made at a time. */
export const RECOVERY_CODE_COUNT = 10

/** RFC 6238 §4: the time step, in seconds. */
export const TOTP_PERIOD = 30

/** How long an enrolment that has not been confirmed keeps its secret (a reload shows the same QR code). */
const PENDING_SECONDS = 15 * 60

/** How long a typed code or recovery code may be (the input is anyone's). */
const INPUT_MAX = 64

export interface Enrolment {
  /** The secret in base32, as an authenticator app takes it by hand. */
  secret: string
  /** The otpauth://totp/ key URI (what the QR code holds). */
  uri: string
  /** The QR code of the URI, as an SVG element (inline: the page's CSP allows no image source). */
  qrSvg: string
}

export interface FactorStatus {
  totp: { confirmedAt: number; lastUsedAt: number | undefined } | undefined
  recoveryCodesLeft: number
}

export type SecondFactorKind = 'otp' | 'recovery_code'

export type CheckResult = { ok: true } | { ok: false; reason: 'bad_code' | 'locked' }

export interface CheckContext {
  address: string
  requestId?: string | undefined
  clientId?: string | undefined
}

export interface SecondFactors {
  /** Whether the person has a confirmed second factor. */
  hasFactor(subjectId: string): Promise<boolean>
  status(subjectId: string): Promise<FactorStatus>
  /** The enrolment to show: the one under way if it is recent, else a new secret. */
  beginEnrolment(user: Pick<User, 'subjectId' | 'username'>): Promise<Enrolment>
  /**
   * Confirms the enrolment under way with a code of it (counted like any check); on success the
   * person's factor is this secret and the ten recovery codes returned are the only ones.
   */
  confirmEnrolment(
    user: Pick<User, 'subjectId' | 'username'>,
    code: string,
    ctx: CheckContext,
  ): Promise<{ ok: true; recoveryCodes: string[] } | { ok: false; reason: 'bad_code' | 'locked' | 'no_enrolment' }>
  /** Checks a one-time code or a recovery code of the person (each accepted once). */
  check(user: Pick<User, 'subjectId' | 'username'>, kind: SecondFactorKind, value: string, ctx: CheckContext): Promise<CheckResult>
  /** A new set of ten recovery codes replacing the old ones; undefined when the person has no factor. */
  regenerateRecoveryCodes(user: Pick<User, 'subjectId' | 'username'>, ctx: Partial<CheckContext>): Promise<string[] | undefined>
  /** Removes the person's factors; false when there were none. `by`: the person, or an operator. */
  remove(user: Pick<User, 'subjectId' | 'username'>, by: 'self' | 'admin', ctx: Partial<CheckContext>): Promise<boolean>
}

export interface SecondFactorDeps {
  store: UserFactorStore
  failures: Pick<FailureCounterStore, 'recordFailure' | 'clear'>
  /** The password lockout's policy (LOCKOUT_*): codes count toward the same threshold. */
  policy: FailurePolicy
  clock: Clock
  audit: AuditSink
  /** The name an authenticator app shows beside the codes (the otpauth issuer). */
  issuerName: string
  /** The AES-256 key from KEY_ENCRYPTION_SECRET; undefined: secrets are stored as they are. */
  encryptionKey: Buffer | undefined
}

/** The AAD of a person's TOTP secret: a ciphertext copied to another person does not decrypt. */
const secretAad = (subjectId: string) => `totp:${subjectId}`

/** Recovery codes are compared without case, spaces or hyphens (people copy them from paper). */
export function normalizeRecoveryCode(value: string): string {
  return value.toLowerCase().replace(/[\s-]/g, '')
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567'

/** 80 random bits as 16 base32 characters, in four groups: xxxx-xxxx-xxxx-xxxx. */
function newRecoveryCode(): string {
  const bytes = randomBytes(10)
  let bits = 0
  let value = 0
  let out = ''
  for (const b of bytes) {
    value = (value << 8) | b
    bits += 8
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  return out.match(/.{4}/g)!.join('-')
}

/** What is stored of a recovery code: base64url SHA-256 of the subject and the normalized code. */
export function recoveryCodeHash(subjectId: string, code: string): string {
  return createHash('sha256')
    .update(`${subjectId}\n${normalizeRecoveryCode(code)}`)
    .digest('base64url')
}

export function createSecondFactors(deps: SecondFactorDeps): SecondFactors {
  const { store, clock, audit } = deps

  const seal = (subjectId: string, secret: string) =>
    deps.encryptionKey ? encryptAtRest(secret, deps.encryptionKey, secretAad(subjectId)) : secret

  function open(subjectId: string, stored: string): string {
    if (!stored.startsWith('v1.')) return stored // base32 has no dot: stored before KEY_ENCRYPTION_SECRET was set
    if (!deps.encryptionKey) throw new KeyDecryptionError('a one-time code secret is encrypted and KEY_ENCRYPTION_SECRET is not set')
    return decryptAtRest(stored, deps.encryptionKey, secretAad(subjectId), 'a one-time code secret')
  }

  const accountKey = (subjectId: string): FailureKey => ({ kind: 'user', name: subjectId, source: '' })

  /** The time step a code of `secret` was made in, if `code` is one of the three steps around now. */
  async function stepOf(secret: string, code: string): Promise<number | undefined> {
    const token = code.replace(/\s/g, '')
    if (!/^\d{6}$/.test(token)) return undefined
    const { verify } = await otp()
    const result = await verify({
      secret,
      token,
      algorithm: 'sha1',
      digits: 6,
      period: TOTP_PERIOD,
      epoch: Math.floor(clock.now() / 1000),
      epochTolerance: TOTP_PERIOD, // RFC 6238 §5.2: one step either side
    })
    return result.valid && 'timeStep' in result ? result.timeStep : undefined
  }

  function recoveryCodes(subjectId: string): { codes: string[]; hashes: string[] } {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode)
    return { codes, hashes: codes.map((c) => recoveryCodeHash(subjectId, c)) }
  }

  /**
   * Counts a failure first (as the password check does), runs `right`, and forgets the account's
   * failures only when it was right. A block in force answers 'locked' without checking anything.
   */
  async function counted(
    user: Pick<User, 'subjectId' | 'username'>,
    kind: SecondFactorKind,
    ctx: CheckContext,
    right: () => Promise<boolean>,
  ): Promise<CheckResult> {
    const key = accountKey(user.subjectId)
    const record = await deps.failures.recordFailure(key, deps.policy, clock.now())
    const base = {
      username: user.username,
      subject: user.subjectId,
      clientId: ctx.clientId,
      address: ctx.address,
      requestId: ctx.requestId,
    }
    if (!record.counted) {
      audit.emit({ event: 'signin.second_factor_failed', ...base, factor: kind, reason: 'locked' })
      return { ok: false, reason: 'locked' }
    }
    if (await right()) {
      await deps.failures.clear(key)
      return { ok: true }
    }
    audit.emit({ event: 'signin.second_factor_failed', ...base, factor: kind, reason: 'bad_code' })
    if (record.blockedUntil !== undefined) {
      audit.emit({
        event: 'user.locked_out',
        ...base,
        reason: 'too_many_failures',
        lockedUntil: new Date(record.blockedUntil).toISOString(),
        lockouts: record.blocks,
      })
    }
    return { ok: false, reason: 'bad_code' }
  }

  return {
    hasFactor: (subjectId) => store.hasFactor(subjectId),

    async status(subjectId) {
      const f = await store.find(subjectId)
      return {
        totp: f?.totp && { confirmedAt: f.totp.confirmedAt, lastUsedAt: f.totp.lastUsedAt },
        recoveryCodesLeft: f?.totp ? f.recoveryCodesLeft : 0,
      }
    },

    async beginEnrolment(user) {
      const now = clock.now()
      const found = await store.find(user.subjectId)
      const recent = found?.pending && now - found.pending.createdAt < PENDING_SECONDS * 1000 ? found.pending : undefined
      const { generateSecret, generateURI } = await otp()
      let secret: string
      if (recent) secret = open(user.subjectId, recent.secret)
      else {
        secret = generateSecret({ length: 20 }) // 160 bits
        await store.setPending(user.subjectId, seal(user.subjectId, secret), now)
      }
      const uri = generateURI({
        issuer: deps.issuerName,
        label: user.username,
        secret,
        algorithm: 'sha1',
        digits: 6,
        period: TOTP_PERIOD,
      })
      const qrSvg = await (await qrcode()).default.toString(uri, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' })
      return { secret, uri, qrSvg }
    },

    async confirmEnrolment(user, code, ctx) {
      const pending = (await store.find(user.subjectId))?.pending
      if (!pending || clock.now() - pending.createdAt >= PENDING_SECONDS * 1000) return { ok: false, reason: 'no_enrolment' }
      const secret = open(user.subjectId, pending.secret)
      const { codes, hashes } = recoveryCodes(user.subjectId)
      let confirmed = false
      const checked = await counted(user, 'otp', ctx, async () => {
        const step = code.length <= INPUT_MAX ? await stepOf(secret, code) : undefined
        if (step === undefined) return false
        confirmed = await store.confirm(user.subjectId, pending.secret, step, hashes, clock.now())
        return confirmed
      })
      if (!checked.ok) return checked
      audit.emit({
        event: 'factor.enrolled',
        username: user.username,
        subject: user.subjectId,
        address: ctx.address,
        requestId: ctx.requestId,
        factor: 'otp',
      })
      return { ok: true, recoveryCodes: codes }
    },

    async check(user, kind, value, ctx) {
      return counted(user, kind, ctx, async () => {
        if (value.length > INPUT_MAX) return false
        const now = clock.now()
        if (kind === 'recovery_code') {
          const normalized = normalizeRecoveryCode(value)
          return normalized.length > 0 && store.useRecoveryCode(user.subjectId, recoveryCodeHash(user.subjectId, normalized), now)
        }
        const totp = (await store.find(user.subjectId))?.totp
        if (!totp) return false
        const step = await stepOf(open(user.subjectId, totp.secret), value)
        return step !== undefined && store.useStep(user.subjectId, step, now)
      })
    },

    async regenerateRecoveryCodes(user, ctx) {
      const { codes, hashes } = recoveryCodes(user.subjectId)
      if (!(await store.replaceRecoveryCodes(user.subjectId, hashes, clock.now()))) return undefined
      audit.emit({
        event: 'factor.recovery_codes_replaced',
        username: user.username,
        subject: user.subjectId,
        address: ctx.address,
        requestId: ctx.requestId,
        factor: 'recovery_code',
      })
      return codes
    },

    async remove(user, by, ctx) {
      if (!(await store.remove(user.subjectId))) return false
      audit.emit({
        event: 'factor.removed',
        username: user.username,
        subject: user.subjectId,
        address: ctx.address,
        requestId: ctx.requestId,
        reason: by,
      })
      return true
    },
  }
}
