// Every check of a user's password goes through here (sign-in page, password grant): one place
// that can count failures and lock accounts (RFC 6749 §10.10, RFC 9700 §4.15). The caller shows
// the same message for every failure reason; the reason is for logs and audit only.
import type { User } from '../domain/types.js'
import type { UserStore } from '../stores/types.js'
import { verifyPassword } from '../tokens/passwords.js'

export type PasswordFailure = 'unknown_user' | 'bad_password' | 'disabled' | 'locked'

export type PasswordCheckResult = { ok: true; user: User } | { ok: false; reason: PasswordFailure; user?: User }

export interface PasswordCheckContext {
  /** The source address of the request (req.ip), for throttling and logs. */
  address: string
  /** The client on whose behalf the person signs in, when known. */
  clientId?: string
}

export interface PasswordCheck {
  check(username: string, password: string, ctx: PasswordCheckContext): Promise<PasswordCheckResult>
}

/** The plain check: scrypt against the stored hash, the same time spent for a missing user. */
export function createPasswordCheck(deps: { users: Pick<UserStore, 'findByUsername'> }): PasswordCheck {
  return {
    async check(username, password) {
      const user = username ? await deps.users.findByUsername(username) : undefined
      // verifyPassword spends the same time for a missing hash: no user enumeration by timing.
      const ok = await verifyPassword(password, user?.enabled ? user.passwordHash : undefined)
      if (!user) return { ok: false, reason: 'unknown_user' }
      if (!user.enabled) return { ok: false, reason: 'disabled', user }
      return ok ? { ok: true, user } : { ok: false, reason: 'bad_password', user }
    },
  }
}
