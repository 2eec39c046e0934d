// /admin/users/{username}/factors and …/reset-factors: a person's second factors as
// `authz users factors` shows them (never a secret or a recovery code), and their removal for a
// person who lost their device, which ends every session of the user as `authz users
// reset-factors` does: their next sign-in asks for the password only and, where a second factor is
// required, leads them to set up a new one. Passkeys are second factors too (where PASSKEYS is on,
// a person who has one is asked for it after the password), so a reset removes them as well.
import { z } from 'zod'
import type { AdminCaller, AdminDeps } from './deps.js'
import { notFound } from './problem.js'
import type { Passkey } from '../stores/passkeys.js'
import type { StoredFactors } from '../stores/user-factors.js'

const iso = z.iso.datetime()
export const FactorsView = z.strictObject({
  totp: z
    .strictObject({ setUpAt: iso, lastUsedAt: iso.optional().describe('absent: never used since it was set up') })
    .optional()
    .describe('the one-time code factor (RFC 6238); absent: none'),
  recoveryCodesLeft: z.number().int().describe('recovery codes not yet used'),
  passkeys: z
    .array(
      z.strictObject({
        name: z.string(),
        setUpAt: iso,
        lastUsedAt: iso.optional().describe('absent: never used since it was added'),
      }),
    )
    .describe('the passkeys (WebAuthn credentials), oldest first: a second factor where PASSKEYS is on'),
})
export type FactorsView = z.infer<typeof FactorsView>

export const FactorsReset = z.strictObject({
  subjectId: z.string(),
  removed: z.boolean().describe('false: the user had no second factor, no one-time codes and no passkey (and no session was ended)'),
  sessionsEnded: z.number().int(),
})
export type FactorsReset = z.infer<typeof FactorsReset>

const time = (ms: number) => new Date(ms).toISOString()

/** What the database holds of a person's factors, as the admin API and the CLI show it (never a secret or a key). */
export function factorsView(found: StoredFactors | undefined, passkeys: readonly Passkey[]): FactorsView {
  const totp = found?.totp
  return {
    ...(totp
      ? { totp: { setUpAt: time(totp.confirmedAt), ...(totp.lastUsedAt !== undefined ? { lastUsedAt: time(totp.lastUsedAt) } : {}) } }
      : {}),
    recoveryCodesLeft: totp ? found.recoveryCodesLeft : 0,
    passkeys: [...passkeys]
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((p) => ({
        name: p.name,
        setUpAt: time(p.createdAt),
        ...(p.lastUsedAt !== undefined ? { lastUsedAt: time(p.lastUsedAt) } : {}),
      })),
  }
}

export function createUserFactorAdmin(deps: AdminDeps) {
  return {
    async get(username: string): Promise<FactorsView> {
      const user = await deps.read.users.findByUsername(username)
      if (!user) throw notFound('user')
      const [found, passkeys] = await Promise.all([
        deps.read.factors.find(user.subjectId),
        deps.read.passkeys.listForSubject(user.subjectId),
      ])
      return factorsView(found, passkeys)
    },

    /** Removes every factor (passkeys too), recovery code and enrolment under way, and ends the user's sessions, in one transaction. */
    async reset(username: string, caller: AdminCaller, ctx: { address: string; requestId: string }): Promise<FactorsReset> {
      return deps.write(async (w) => {
        const user = await w.users.findByUsername(username)
        if (!user) throw notFound('user')
        const codes = await w.factors.remove(user.subjectId)
        const passkeys = await w.passkeys.removeAllForSubject(user.subjectId)
        if (!codes && passkeys === 0) return { subjectId: user.subjectId, removed: false, sessionsEnded: 0 }
        const sessionsEnded = await w.sessions.removeAllForSubject(user.subjectId, { reason: 'admin', at: deps.clock.now() })
        deps.audit.emit({
          event: 'factor.removed',
          username: user.username,
          subject: user.subjectId,
          address: ctx.address,
          requestId: ctx.requestId,
          reason: 'admin',
        })
        deps.audit.emit({
          event: 'admin.changed',
          clientId: caller.clientId,
          resource: `users/${username}`,
          action: 'reset-factors',
          changes: [],
        })
        return { subjectId: user.subjectId, removed: true, sessionsEnded }
      })
    },
  }
}
