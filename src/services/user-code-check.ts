// CIBA user_code (CIBA Core §7.1: a secret known only to the user, stored hashed like a password):
// wrong codes are counted per client and user in Postgres, before scrypt runs and cleared on a
// right code, like the password lockout. USER_CODE_FAILURE_LIMIT wrong codes in a row refuse that
// client's requests for that user with invalid_user_code for USER_CODE_BLOCK_DURATION, doubling
// up to LOCKOUT_MAX_DURATION; other clients are unaffected (RFC 6749 §10.10, RFC 8628 §5.1).
import type { Logger } from 'pino'
import type { Clock } from '../domain/clock.js'
import type { User } from '../domain/types.js'
import { OAuthError } from '../errors.js'
import type { FailureCounterStore, FailurePolicy } from '../stores/types.js'
import { verifyPassword } from '../tokens/passwords.js'

export interface UserCodeCheck {
  /** Throws missing_user_code / invalid_user_code; nothing to check when the user has no code. */
  check(clientId: string, user: User, code: string | undefined): Promise<void>
}

export interface UserCodeCheckDeps {
  failures: Pick<FailureCounterStore, 'recordFailure' | 'clear'>
  clock: Clock
  logger: Pick<Logger, 'info' | 'warn'>
  policy: FailurePolicy
  verify?: (code: string, stored: string | undefined) => Promise<boolean>
}

export function userCodePolicy(config: { userCodeFailureLimit: number; userCodeBlockDuration: number; lockoutMaxDuration: number }): FailurePolicy {
  return { limit: config.userCodeFailureLimit, baseSeconds: config.userCodeBlockDuration, maxSeconds: config.lockoutMaxDuration }
}

export function createUserCodeCheck(deps: UserCodeCheckDeps): UserCodeCheck {
  const verify = deps.verify ?? verifyPassword
  return {
    async check(clientId, user, code) {
      if (user.cibaUserCodeHash === undefined) return
      if (code === undefined) throw new OAuthError('missing_user_code', 'this user requires a user_code')
      const key = { kind: 'user_code', name: user.subjectId, source: clientId } as const
      const counted = await deps.failures.recordFailure(key, deps.policy, deps.clock.now())
      const log = { client_id: clientId, subject: user.subjectId }
      if (!counted.counted) {
        deps.logger.info({ ...log, reason: 'blocked' }, 'user_code rejected')
        throw new OAuthError('invalid_user_code', 'too many wrong user_code values from this client for this user, retry later')
      }
      if (await verify(code, user.cibaUserCodeHash)) {
        await deps.failures.clear(key)
        return
      }
      deps.logger.info({ ...log, reason: 'wrong_code' }, 'user_code rejected')
      if (counted.blockedUntil !== undefined) {
        deps.logger.warn({ ...log, blocked_until: new Date(counted.blockedUntil).toISOString(), blocks: counted.blocks }, 'user_code blocked')
      }
      throw new OAuthError('invalid_user_code', 'the user_code is wrong')
    },
  }
}
