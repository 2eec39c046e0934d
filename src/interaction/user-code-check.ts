// CIBA user_code (CIBA Core §7.1: a secret known only to the user, stored hashed like a password):
// wrong codes are counted per client and user in Postgres, before scrypt runs and cleared on a
// right code, like the password lockout. USER_CODE_FAILURE_LIMIT wrong codes in a row refuse that
// client's requests for that user with invalid_user_code for USER_CODE_BLOCK_DURATION, doubling
// up to LOCKOUT_MAX_DURATION; other clients are unaffected (RFC 6749 §10.10, RFC 8628 §5.1).
import type { Logger } from 'pino'
import { throttleAddress } from '../domain/address.js'
import type { Clock } from '../domain/clock.js'
import type { User } from '../domain/types.js'
import { OAuthError } from '../errors.js'
import type { FailureCounterStore, FailurePolicy } from '../stores/failure-counters.js'
import { verifyPassword } from './passwords.js'

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

export function userCodePolicy(config: {
  userCodeFailureLimit: number
  userCodeBlockDuration: number
  lockoutMaxDuration: number
}): FailurePolicy {
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
        deps.logger.warn(
          { ...log, blocked_until: new Date(counted.blockedUntil).toISOString(), blocks: counted.blocks },
          'user_code blocked',
        )
      }
      throw new OAuthError('invalid_user_code', 'the user_code is wrong')
    },
  }
}

/** What a device user code lookup found (createDeviceUserCodeThrottle). */
export type DeviceCodeLookup<R> = { kind: 'found'; value: R } | { kind: 'unknown' } | { kind: 'blocked'; until: number | undefined }

export interface DeviceUserCodeThrottle {
  /**
   * Looks a typed device user code up unless the address is blocked; a code that names nothing
   * (`code` undefined: not even of our form) counts against the address.
   */
  lookup<R>(address: string, code: string | undefined, find: (code: string) => Promise<R | undefined>): Promise<DeviceCodeLookup<R>>
}

/**
 * RFC 8628 §5.1: device user codes are short, so wrong ones are counted per source address in
 * Postgres (every replica agrees; an IPv6 address by its /64, src/domain/address.ts);
 * USER_CODE_FAILURE_LIMIT of them block the address for USER_CODE_BLOCK_DURATION, doubling up to
 * LOCKOUT_MAX_DURATION. Every lookup is counted before it runs, and taken back when the code
 * names a request: counting only after a miss would let a burst of concurrent guesses all pass
 * the block check before the first miss is counted. A right code does not clear the count:
 * anyone can get a right code by starting a device flow, and must not reset the count between
 * guesses with it. A blocked address learns nothing about any code.
 */
export function createDeviceUserCodeThrottle(
  deps: Omit<UserCodeCheckDeps, 'verify' | 'failures'> & {
    failures: Pick<FailureCounterStore, 'recordFailure' | 'forgive'>
  },
): DeviceUserCodeThrottle {
  return {
    async lookup(address, code, find) {
      const key = { kind: 'device_user_code', name: throttleAddress(address), source: '' } as const
      const log = { address: key.name }
      const counted = await deps.failures.recordFailure(key, deps.policy, deps.clock.now())
      if (!counted.counted) {
        deps.logger.info({ ...log, reason: 'blocked' }, 'device user_code rejected')
        return { kind: 'blocked', until: counted.blockedUntil }
      }
      const found = code === undefined ? undefined : await find(code)
      if (found !== undefined) {
        await deps.failures.forgive(key, counted, deps.policy)
        return { kind: 'found', value: found }
      }
      deps.logger.info({ ...log, reason: 'unknown_code' }, 'device user_code rejected')
      if (counted.blockedUntil !== undefined) {
        deps.logger.warn(
          { ...log, blocked_until: new Date(counted.blockedUntil).toISOString(), blocks: counted.blocks },
          'device user_code blocked',
        )
      }
      return { kind: 'unknown' }
    },
  }
}
