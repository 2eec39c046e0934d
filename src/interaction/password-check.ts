// Every check of a user's password goes through here (sign-in page, password grant): one place
// that counts failures and locks accounts (RFC 6749 §10.10, RFC 9700 §4.15). The caller shows
// the same message for every failure reason; the reason is for logs and audit only.
//
// Lockout: the failure is counted in Postgres (every replica agrees) BEFORE scrypt runs, and
// cleared when the password was right, so concurrent guesses can never run more than the
// threshold of checks between two locks. The LOCKOUT_THRESHOLD-th failure in a row locks the
// account for LOCKOUT_DURATION, doubled at each further lock up to LOCKOUT_MAX_DURATION. While
// locked every check fails with 'locked' at once: no scrypt, no slowed answer. A success forgets
// the failures and the escalation; so does LOCKOUT_MAX_DURATION without a failure. For a person
// with a second factor, only that factor's success does (src/interaction/second-factor.ts): a right
// password between wrong codes must not give a guesser of codes a fresh count.
//
// No user enumeration (RFC 6749 §10.10 asks the same of every answer): an unknown username is
// counted and locked like an account, and a disabled account like an enabled one, so every check
// costs one count and one scrypt, and a lock, which answers at once, comes after the same number
// of failures whether the account exists or not.
//
// A name no account has is kept and logged only as its HMAC-SHA256 under a server secret
// (usernameDigest): people type their password into the username field, and such a name must not
// sit readable in the audit log or in failure_counters. The key is shared by every replica, so the
// same name gets the same counter everywhere, and without it nobody can test guesses against the
// digests. Accounts are counted by subject id and logged by the username, as neither is a secret.
import { createHmac } from 'node:crypto'
import type { Logger } from 'pino'
import type { Clock } from '../domain/clock.js'
import { createAuditLog, type AuditSink } from '../observe/audit.js'
import type { User } from '../domain/types.js'
import type { FailureCounterStore, FailureKey, FailurePolicy } from '../stores/failure-counters.js'
import type { UserStore } from '../stores/users.js'
import { verifyPassword } from './passwords.js'

export type PasswordFailure = 'unknown_user' | 'bad_password' | 'disabled' | 'locked'

export type PasswordCheckResult = { ok: true; user: User } | { ok: false; reason: PasswordFailure; user?: User }

export interface PasswordCheckContext {
  /** The source address of the request (req.ip), for throttling and logs. */
  address: string
  /** The client on whose behalf the person signs in, when known. */
  clientId?: string
  /** The request's id, for audit events. */
  requestId?: string
}

export interface PasswordCheck {
  check(username: string, password: string, ctx: PasswordCheckContext): Promise<PasswordCheckResult>
}

export interface PasswordCheckDeps {
  users: Pick<UserStore, 'findByUsername'>
  failures: Pick<FailureCounterStore, 'recordFailure' | 'clear' | 'forgive'>
  clock: Clock
  logger: Pick<Logger, 'info' | 'warn'>
  /** From LOCKOUT_THRESHOLD, LOCKOUT_DURATION, LOCKOUT_MAX_DURATION. */
  policy: FailurePolicy
  /** signin.succeeded, signin.failed, user.locked_out; by default written to `logger`. */
  audit?: AuditSink
  /** The HMAC key for usernames no account has (server secret 'username-hmac'): see usernameDigest. */
  usernameKey: Buffer
  /**
   * Whether a right password leaves the account's failures counted (a person with a second factor:
   * wrong codes and wrong passwords add up to one threshold, and only the second factor clears it).
   */
  keepsFailures?: (user: User) => Promise<boolean>
  /** scrypt verification; replaceable so tests can count the calls. */
  verify?: (password: string, stored: string | undefined) => Promise<boolean>
}

/** The policy from the configuration. */
export function lockoutPolicy(config: { lockoutThreshold: number; lockoutDuration: number; lockoutMaxDuration: number }): FailurePolicy {
  return { limit: config.lockoutThreshold, baseSeconds: config.lockoutDuration, maxSeconds: config.lockoutMaxDuration }
}

/** The failure counter `source` of a username no account has ('' is an account's, by subject id). */
export const UNKNOWN_USERNAME = 'unknown-username'

/** Unknown usernames are counted by their first 200 characters (the input is the attacker's). */
const COUNTED_USERNAME_MAX = 200

/** Longer usernames are cut in the logs (the input is the attacker's). */
const LOGGED_USERNAME_MAX = 200

/**
 * What stands in for a username no account has, in failure_counters (its `name`) and in the
 * audit log (`username_hash`): base64url HMAC-SHA256 under `key` of its first 200 characters.
 */
export function usernameDigest(key: Buffer, username: string): string {
  return createHmac('sha256', key).update(username.slice(0, COUNTED_USERNAME_MAX)).digest('base64url')
}

export function createPasswordCheck(deps: PasswordCheckDeps): PasswordCheck {
  const verify = deps.verify ?? verifyPassword
  const audit = deps.audit ?? createAuditLog({ logger: deps.logger })

  /** How the name typed is logged: an account's as typed, any other only by its digest. */
  type Typed = { username: string } | { usernameHash: string } | Record<string, never>

  function failed(reason: PasswordFailure, typed: Typed, ctx: PasswordCheckContext, user?: User): PasswordCheckResult {
    audit.emit({
      event: 'signin.failed',
      ...typed,
      subject: user?.subjectId,
      clientId: ctx.clientId,
      address: ctx.address,
      requestId: ctx.requestId,
      reason,
    })
    return user ? { ok: false, reason, user } : { ok: false, reason }
  }

  function accountKey(user: User, username: string): { key: FailureKey; typed: Typed } {
    return { key: { kind: 'user', name: user.subjectId, source: '' }, typed: { username: username.slice(0, LOGGED_USERNAME_MAX) } }
  }

  function unknownKey(username: string): { key: FailureKey; typed: Typed } {
    const digest = usernameDigest(deps.usernameKey, username)
    return { key: { kind: 'user', name: digest, source: UNKNOWN_USERNAME }, typed: { usernameHash: digest } }
  }

  return {
    async check(username, password, ctx) {
      if (!username) {
        await verify(password, undefined) // nothing to count: an empty name guesses nothing
        return failed('unknown_user', {}, ctx)
      }
      const user = await deps.users.findByUsername(username)
      const { key, typed } = user ? accountKey(user, username) : unknownKey(username)
      const counted = await deps.failures.recordFailure(key, deps.policy, deps.clock.now())
      if (!counted.counted) return failed('locked', typed, ctx, user)
      if (!user || !user.enabled) {
        // verifyPassword spends the same time for a missing hash: no user enumeration by timing.
        await verify(password, undefined)
        return failed(user ? 'disabled' : 'unknown_user', typed, ctx, user)
      }
      if (await verify(password, user.passwordHash)) {
        // Kept failures: this attempt's count is taken back, the earlier ones stay.
        if (await deps.keepsFailures?.(user)) await deps.failures.forgive(key, counted, deps.policy)
        else await deps.failures.clear(key)
        audit.emit({
          event: 'signin.succeeded',
          username: user.username,
          subject: user.subjectId,
          clientId: ctx.clientId,
          address: ctx.address,
          requestId: ctx.requestId,
        })
        return { ok: true, user }
      }
      if (counted.blockedUntil !== undefined) {
        audit.emit({
          event: 'user.locked_out',
          username: user.username,
          subject: user.subjectId,
          clientId: ctx.clientId,
          address: ctx.address,
          requestId: ctx.requestId,
          reason: 'too_many_failures',
          lockedUntil: new Date(counted.blockedUntil).toISOString(),
          lockouts: counted.blocks,
        })
      }
      return failed('bad_password', typed, ctx, user)
    },
  }
}
