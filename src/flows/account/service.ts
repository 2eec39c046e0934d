// The account page's logic: a person's own control panel. What they see: the applications that
// can reach their account (src/interaction/app-access.ts), their live sign-in sessions, and
// whether they have a password here. What they may do: withdraw an application's access (its
// consent and every token issued under it), end one of their other sessions or all of them (each
// queues its back-channel logouts, OpenID Connect Back-Channel Logout 1.0 §2.5), and change their
// password. No Fastify: the routes (routes.ts) parse and reply, the pages (pages.ts) render.
//
// Password change (NIST SP 800-63B §5.1.1.2): the current password is checked through the one
// password check of the server (src/interaction/password-check.ts), so a wrong one counts toward
// the account's lockout exactly as a failed sign-in does, and a locked account cannot change its
// password either. The new one must have at least MIN_PASSWORD_LENGTH characters, be typed twice
// alike and differ from the current one; it is hashed as the seed file and the CLI hash it. Every
// other session of the person ends (whoever knew the old password is signed out everywhere), the
// session it was changed in stays.
import type { Clock } from '../../domain/clock.js'
import type { AppAccess } from '../../interaction/app-access.js'
import type { PasswordCheck } from '../../interaction/password-check.js'
import { hashPassword } from '../../interaction/passwords.js'
import { describeScopes, type ScopeDescription } from '../../interaction/scope-descriptions.js'
import type { Session, SessionService } from '../../interaction/session.js'
import type { AuditSink } from '../../observe/audit.js'
import type { SecondFactors } from '../../interaction/second-factor.js'
import type { ClientStore } from '../../stores/clients.js'
import type { ResourceStore } from '../../stores/resources.js'
import type { UserStore } from '../../stores/users.js'
import { describeDevice, type Device } from './device.js'
import type { AccountPasskeys, PasskeysView } from './passkeys.js'

/** NIST SP 800-63B §5.1.1.2: at least 8 characters; every character counts, none is required. */
export const MIN_PASSWORD_LENGTH = 8

export interface AppView {
  clientId: string
  clientName: string
  scopes: ScopeDescription[]
  /** ms */
  since: number
  remembered: boolean
}

export interface SessionView {
  sid: string
  device: Device
  /** ms */
  signedInAt: number
  lastUsedAt: number
  /** The session this page is shown in. */
  current: boolean
  /** The identity provider the session began at, by its display name; undefined: a password here. */
  provider: string | undefined
}

export interface AccountView {
  username: string
  /** The user's `name` claim, when there is one. */
  name: string | undefined
  apps: AppView[]
  sessions: SessionView[]
  /** Whether the person has a password here (one signed in only through a provider has none to change). */
  hasPassword: boolean
  /** Their one-time codes: on or off, and the recovery codes left (undefined: not offered). */
  twoStep?: { on: boolean; recoveryCodesLeft: number } | undefined
  /** The passkeys section; undefined where passkeys are not offered and the person has none. */
  passkeys: PasskeysView | undefined
}

export type PasswordChangeFailure = 'missing' | 'too_short' | 'mismatch' | 'unchanged' | 'wrong_password'

export type PasswordChangeResult = { ok: true; sessionsEnded: number } | { ok: false; failure: PasswordChangeFailure }

export interface RequestContext {
  address: string
  requestId: string
}

export interface AccountDeps {
  clock: Clock
  apps: AppAccess
  clients: Pick<ClientStore, 'findById'>
  resources: Pick<ResourceStore, 'loadCatalogue'>
  users: Pick<UserStore, 'findBySubjectId' | 'setPasswordHash'>
  sessions: Pick<SessionService, 'list' | 'endBySid' | 'endOthers'>
  passwordCheck: PasswordCheck
  audit: AuditSink
  /** The person's second factors, for the two-step verification section (none when undefined). */
  secondFactors?: Pick<SecondFactors, 'status'> | undefined
  /** The display name of an identity provider by its scheme (undefined when it is gone). */
  providerName(scheme: string): Promise<string | undefined>
  passkeys: Pick<AccountPasskeys, 'view'>
}

export function createAccountService(deps: AccountDeps) {
  const { audit } = deps
  const clientName = async (clientId: string) => {
    const client = await deps.clients.findById(clientId)
    return client?.clientName ?? clientId
  }

  const refused = (session: Session, failure: PasswordChangeFailure, ctx: RequestContext): PasswordChangeResult => {
    audit.emit({ event: 'account.password_refused', subject: session.subjectId, username: session.username, ...ctx, reason: failure })
    return { ok: false, failure }
  }

  async function twoStepOf(subjectId: string): Promise<AccountView['twoStep']> {
    if (!deps.secondFactors) return undefined
    const status = await deps.secondFactors.status(subjectId)
    return { on: status.totp !== undefined, recoveryCodesLeft: status.recoveryCodesLeft }
  }

  return {
    async overview(session: Session): Promise<AccountView> {
      const [user, apps, sessions, catalogue] = await Promise.all([
        deps.users.findBySubjectId(session.subjectId),
        deps.apps.list(session.subjectId),
        deps.sessions.list(session.subjectId),
        deps.resources.loadCatalogue(),
      ])
      const name = user?.claims.name
      return {
        username: session.username,
        name: typeof name === 'string' && name.trim() !== '' ? name : undefined,
        apps: await Promise.all(
          apps.map(async (a) => ({
            clientId: a.clientId,
            clientName: await clientName(a.clientId),
            scopes: describeScopes(catalogue, a.scopes),
            since: a.since,
            remembered: a.remembered,
          })),
        ),
        // This device first, then the others as the store gives them: the most recently used first.
        sessions: await Promise.all(
          [...sessions.filter((s) => s.sid === session.sid), ...sessions.filter((s) => s.sid !== session.sid)].map(async (s) => ({
            sid: s.sid,
            device: describeDevice(s.userAgent),
            signedInAt: s.authTime,
            lastUsedAt: s.lastUsedAt,
            current: s.sid === session.sid,
            provider: s.idp === undefined ? undefined : ((await deps.providerName(s.idp)) ?? s.idp),
          })),
        ),
        hasPassword: user?.passwordHash !== undefined,
        twoStep: await twoStepOf(session.subjectId),
        passkeys: await deps.passkeys.view(session, typeof name === 'string' && name.trim() !== '' ? name : undefined),
      }
    },

    /** Withdraws the application's access; its name, or undefined when it had none to withdraw. */
    async revokeApp(session: Session, clientId: string, ctx: RequestContext): Promise<string | undefined> {
      const { consents, families } = await deps.apps.revoke(session.subjectId, clientId)
      if (consents === 0 && families === 0) return undefined
      audit.emit({ event: 'account.app_revoked', subject: session.subjectId, clientId, families, ...ctx })
      return clientName(clientId)
    },

    /** Ends another of the person's sessions; false when they have no other session with that sid. */
    async endSession(session: Session, sid: string, ctx: RequestContext): Promise<boolean> {
      // The session this page is shown in ends through sign-out (its cookie goes with it).
      if (sid === session.sid) return false
      const ended = await deps.sessions.endBySid(session.subjectId, sid)
      if (!ended) return false
      audit.emit({ event: 'account.session_ended', subject: session.subjectId, sid, sessions: 1, ...ctx })
      return true
    },

    /** Ends every session of the person but this one; how many. */
    async endOtherSessions(session: Session, ctx: RequestContext): Promise<number> {
      const n = await deps.sessions.endOthers(session, 'logout')
      if (n > 0) audit.emit({ event: 'account.session_ended', subject: session.subjectId, sessions: n, ...ctx })
      return n
    },

    async changePassword(
      session: Session,
      form: { current_password?: string | undefined; new_password?: string | undefined; confirm_password?: string | undefined },
      ctx: RequestContext,
    ): Promise<PasswordChangeResult> {
      const current = form.current_password ?? ''
      const next = form.new_password ?? ''
      if (current === '' || next === '') return refused(session, 'missing', ctx)
      // Characters as a person counts them (code points), not UTF-16 units.
      if ([...next].length < MIN_PASSWORD_LENGTH) return refused(session, 'too_short', ctx)
      if (next !== (form.confirm_password ?? '')) return refused(session, 'mismatch', ctx)
      if (next === current) return refused(session, 'unchanged', ctx)
      const checked = await deps.passwordCheck.check(session.username, current, ctx)
      if (!checked.ok || checked.user.subjectId !== session.subjectId) return refused(session, 'wrong_password', ctx)
      await deps.users.setPasswordHash(session.subjectId, await hashPassword(next))
      const sessionsEnded = await deps.sessions.endOthers(session, 'password')
      audit.emit({
        event: 'account.password_changed',
        subject: session.subjectId,
        username: session.username,
        sessions: sessionsEnded,
        ...ctx,
      })
      return { ok: true, sessionsEnded }
    },
  }
}

export type AccountService = ReturnType<typeof createAccountService>
