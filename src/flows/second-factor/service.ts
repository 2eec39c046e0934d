// The second step of a sign-in, and setting up one-time codes (RFC 6238; the factor logic is
// src/interaction/second-factor.ts, what a request needs src/interaction/authentication-level.ts).
// No Fastify: routes.ts parses and replies, pages.ts renders.
//
// The code page finishes a sign-in whose password was right (or steps up an older session): a
// right code adds `otp` and `mfa` to this session's amr (RFC 8176), and only this session's. A
// person with a passkey (where passkeys are offered) is offered it first, their one-time codes
// (if any) as the other choice: the passkey must be one of theirs (src/interaction/passkeys.ts
// binds the step to the session and the person), and adds `hwk` or `swk` and `mfa` (acr phr).
// The enrolment page shows a new secret and is confirmed by a code of it; the confirmation
// counts as this session's second factor too (the person has just shown they hold it), and the
// person's other sessions stay as they were. Managing a factor that exists (replacing it, new
// recovery codes, removing it) needs a session that used a second factor or a passkey: a
// password alone must never be enough to weaken an account. Removing ends the other sessions.
import type { User } from '../../domain/types.js'
import { acrOf, heldFactors, holdsFactor, PASSKEY_LEVEL, stepUpUrl } from '../../interaction/authentication-level.js'
import type { Passkeys } from '../../interaction/passkeys.js'
import type { ReturnTargets } from '../../interaction/return-to.js'
import type { CheckContext, Enrolment, SecondFactorKind, SecondFactors } from '../../interaction/second-factor.js'
import type { Session, SessionService } from '../../interaction/session.js'
import type { PasskeyOffer } from '../../interaction/sign-in.js'
import type { AuditSink } from '../../observe/audit.js'
import type { UserStore } from '../../stores/users.js'

/** What was refused on the second-step page: a code, a recovery code, or a passkey (and why). */
export type CodeFailure = SecondFactorKind | 'passkey' | 'passkey_other_account' | 'passkey_expired' | 'passkey_no_script'

export interface CodeView {
  username: string
  /** The validated return target (undefined: the account page afterwards). */
  returnTo: string | undefined
  /** The person has one-time codes: the code and recovery code forms show. */
  otp: boolean
  /** The person's passkeys are offered first (WebAuthn request options for this session, as JSON). */
  passkey: PasskeyOffer | undefined
  /** Which form's answer was refused. */
  failed: CodeFailure | undefined
  /** Only a passkey will do (the request asked for acr phr): no code forms, `level` kept in the form's address. */
  passkeyOnly: boolean
  /**
   * Where the form's redirects may lead (the client's redirect URI, after the authorization
   * endpoint): a browser applies the page's CSP form-action to every one of them.
   */
  formActionOrigins: string[]
}

export interface EnrolView {
  username: string
  returnTo: string | undefined
  enrolment: Enrolment
  /** A sign-in is waiting for this (the person came from one). */
  required: boolean
  /** The person has a factor already: this one replaces it. */
  replaces: boolean
  failed: boolean
}

export type TwoStepOutcome =
  /** No session: sign in first, then come back to `returnTo`. */
  | { kind: 'sign-in'; returnTo: string | undefined }
  | { kind: 'redirect'; location: string }
  | { kind: 'code'; view: CodeView }
  | { kind: 'enrol'; view: EnrolView }
  | { kind: 'codes'; codes: string[]; enrolled: boolean; next: string }
  | { kind: 'removed'; sessionsEnded: number }

export interface TwoStepDeps {
  factors: SecondFactors
  /** The passkeys, a second factor where they are offered (PASSKEYS). */
  passkeys: Pick<Passkeys, 'available' | 'list' | 'secondFactorOptions' | 'verifySecondFactor'>
  sessions: Pick<SessionService, 'addMethods' | 'endOthers'>
  users: Pick<UserStore, 'findBySubjectId'>
  targets: ReturnTargets
  audit: AuditSink
  /** Where a person goes afterwards without a (valid) return target. */
  accountPath: string
  /** The code page's and the enrolment page's own paths (a step-up comes back to them). */
  codePath: string
  enrolPath: string
}

export interface TwoStepService {
  /** `level` `phr` (PASSKEY_LEVEL): a request needs a passkey, so only the person's passkey is asked for. */
  showCode(rawReturnTo: unknown, session: Session | undefined, level?: unknown): Promise<TwoStepOutcome>
  submitCode(
    rawReturnTo: unknown,
    session: Session | undefined,
    form: { kind?: string; code?: string; webauthn_response?: string },
    ctx: CheckContext,
    level?: unknown,
  ): Promise<TwoStepOutcome>
  showEnrol(rawReturnTo: unknown, session: Session | undefined): Promise<TwoStepOutcome>
  confirm(rawReturnTo: unknown, session: Session | undefined, form: { code?: string }, ctx: CheckContext): Promise<TwoStepOutcome>
  regenerate(session: Session | undefined, ctx: CheckContext): Promise<TwoStepOutcome>
  remove(session: Session | undefined, ctx: CheckContext): Promise<TwoStepOutcome>
}

/**
 * The second step of a sign-in that has one: a second factor or a passkey was used in it; when
 * only a passkey will do, a passkey was used in it (acr phr).
 */
const strong = (session: Session, passkeyOnly = false) => (passkeyOnly ? acrOf(session.amr) === 'phr' : acrOf(session.amr) !== undefined)

const STEPPED_UP = ['otp', 'mfa']

/** How a refused passkey is told on the page. */
function passkeyFailure(reason: string): CodeFailure {
  if (reason === 'other_account' || reason === 'unknown_credential') return 'passkey_other_account'
  if (reason === 'challenge') return 'passkey_expired'
  return 'passkey'
}

export function createTwoStepService(deps: TwoStepDeps): TwoStepService {
  const { factors } = deps
  const withReturn = (path: string, returnTo: string | undefined) => (returnTo ? `${path}?return_to=${encodeURIComponent(returnTo)}` : path)

  async function user(session: Session): Promise<User | undefined> {
    return deps.users.findBySubjectId(session.subjectId)
  }

  const held = (subjectId: string) => heldFactors({ factors, passkeys: deps.passkeys }, subjectId)

  /**
   * Managing a factor, or adding one, when the person has one already (a passkey counts): a weak
   * session is stepped up first, coming back to the account page. Else a stolen password could
   * set up codes of its own and pass the next sign-in's second step with them.
   */
  async function stepUpFirst(session: Session): Promise<TwoStepOutcome | undefined> {
    if (strong(session) || !holdsFactor(await held(session.subjectId))) return undefined
    return { kind: 'redirect', location: withReturn(deps.codePath, deps.accountPath) }
  }

  async function enrolView(session: Session, returnTo: string | undefined, failed: boolean): Promise<TwoStepOutcome> {
    const u = await user(session)
    if (!u) return { kind: 'sign-in', returnTo }
    return {
      kind: 'enrol',
      view: {
        username: u.username,
        returnTo,
        enrolment: await factors.beginEnrolment(u),
        required: returnTo !== undefined,
        replaces: await factors.hasFactor(u.subjectId),
        failed,
      },
    }
  }

  /** The second-step page: the person's passkeys first, then their codes. */
  async function codePage(
    session: Session,
    target: Awaited<ReturnType<ReturnTargets['resolve']>>,
    failed: CodeFailure | undefined,
    passkeyOnly = false,
  ): Promise<TwoStepOutcome> {
    const has = await held(session.subjectId)
    const passkey = has.passkey ? { options: JSON.stringify(await deps.passkeys.secondFactorOptions(session)) } : undefined
    const view: CodeView = {
      username: session.username,
      returnTo: target?.location,
      otp: has.otp && !passkeyOnly,
      passkeyOnly,
      passkey,
      failed,
      formActionOrigins: target?.formActionOrigins ?? [],
    }
    return { kind: 'code', view }
  }

  return {
    async showCode(rawReturnTo, session, level) {
      const target = await deps.targets.resolve(rawReturnTo)
      const next = target?.location ?? deps.accountPath
      const passkeyOnly = level === PASSKEY_LEVEL
      if (!session) return { kind: 'sign-in', returnTo: target?.location }
      if (strong(session, passkeyOnly)) return { kind: 'redirect', location: next }
      const has = await held(session.subjectId)
      // Only a passkey will do and the person has none here: the page that asks for one says so.
      if (passkeyOnly && !has.passkey) return { kind: 'redirect', location: stepUpUrl('passkey', target?.location) }
      // Nothing to ask: a person without a factor sets one up (the page the request needs says so).
      if (!holdsFactor(has)) return { kind: 'redirect', location: withReturn(deps.enrolPath, target?.location) }
      return codePage(session, target, undefined, passkeyOnly)
    },

    async submitCode(rawReturnTo, session, form, ctx, level) {
      const target = await deps.targets.resolve(rawReturnTo)
      const next = target?.location ?? deps.accountPath
      const passkeyOnly = level === PASSKEY_LEVEL
      if (!session) return { kind: 'sign-in', returnTo: target?.location }
      if (strong(session, passkeyOnly)) return { kind: 'redirect', location: next }
      const u = await user(session)
      if (!u) return { kind: 'sign-in', returnTo: target?.location }
      let kind: SecondFactorKind | 'passkey'
      let methods = STEPPED_UP
      if (form.kind === 'passkey') {
        // A form posted without the browser's answer: JavaScript is off (the page says so).
        if (!form.webauthn_response) return codePage(session, target, 'passkey_no_script', passkeyOnly)
        const used = await deps.passkeys.verifySecondFactor(session, form.webauthn_response, { ...ctx, clientId: target?.client?.clientId })
        if (!used.ok) return codePage(session, target, passkeyFailure(used.reason), passkeyOnly)
        kind = 'passkey'
        methods = used.amr
      } else {
        // A code is less than the request asked for: nothing is checked, the page asks for the passkey.
        if (passkeyOnly) return codePage(session, target, undefined, true)
        kind = form.kind === 'recovery_code' ? 'recovery_code' : 'otp'
        const checked = await factors.check(u, kind, form.code ?? '', ctx)
        if (!checked.ok) return codePage(session, target, kind)
      }
      await deps.sessions.addMethods(session, methods)
      deps.audit.emit({
        event: 'signin.stepped_up',
        username: u.username,
        subject: u.subjectId,
        sid: session.sid,
        clientId: ctx.clientId ?? target?.client?.clientId,
        address: ctx.address,
        requestId: ctx.requestId,
        factor: kind,
      })
      return { kind: 'redirect', location: next }
    },

    async showEnrol(rawReturnTo, session) {
      const target = await deps.targets.resolve(rawReturnTo)
      if (!session) return { kind: 'sign-in', returnTo: withReturn(deps.enrolPath, target?.location) }
      return (await stepUpFirst(session)) ?? enrolView(session, target?.location, false)
    },

    async confirm(rawReturnTo, session, form, ctx) {
      const target = await deps.targets.resolve(rawReturnTo)
      if (!session) return { kind: 'sign-in', returnTo: withReturn(deps.enrolPath, target?.location) }
      const first = await stepUpFirst(session)
      if (first) return first
      const u = await user(session)
      if (!u) return { kind: 'sign-in', returnTo: target?.location }
      const done = await factors.confirmEnrolment(u, form.code ?? '', ctx)
      if (!done.ok) return enrolView(session, target?.location, true)
      // This session has just shown the factor; the person's other sessions stay as they were.
      await deps.sessions.addMethods(session, STEPPED_UP)
      return { kind: 'codes', codes: done.recoveryCodes, enrolled: true, next: target?.location ?? deps.accountPath }
    },

    async regenerate(session, ctx) {
      if (!session) return { kind: 'sign-in', returnTo: deps.accountPath }
      const first = await stepUpFirst(session)
      if (first) return first
      const u = await user(session)
      const codes = u && (await factors.regenerateRecoveryCodes(u, ctx))
      if (!codes) return { kind: 'redirect', location: deps.accountPath }
      return { kind: 'codes', codes, enrolled: false, next: deps.accountPath }
    },

    async remove(session, ctx) {
      if (!session) return { kind: 'sign-in', returnTo: deps.accountPath }
      const first = await stepUpFirst(session)
      if (first) return first
      const u = await user(session)
      if (!u || !(await factors.remove(u, 'self', ctx))) return { kind: 'redirect', location: deps.accountPath }
      // Whoever used the factor elsewhere is signed out (a lost or stolen device among them).
      const sessionsEnded = await deps.sessions.endOthers(session, 'factors')
      return { kind: 'removed', sessionsEnded }
    },
  }
}
