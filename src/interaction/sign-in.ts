// The one sign-in page's logic (every flow sends the person here; src/flows/sign-in/routes.ts is its
// HTTP side). The page names the application that asks (from the return target's flow) before a
// password is typed, keeps the username after a failure, and shows one message for every kind of
// failure (unknown user, wrong password, disabled, locked: PasswordCheck tells them apart for the
// log only), so it cannot be used to learn who has an account. Passwords go through PasswordCheck
// (lockout, throttling, failure logs). A success starts a new session (src/interaction/session.ts).
import type { PasswordCheck } from './password-check.js'
import type { ReturnTarget, ReturnTargets } from './return-to.js'
import type { Session, SessionService } from './session.js'

/** The page model of the sign-in page (rendered by src/pages/sign-in.ts). */
export interface SignInView {
  /** The validated return target (undefined: the account page afterwards). */
  returnTo: string | undefined
  /** The application that asks, when the return target names one. */
  client: { clientId: string; clientName: string } | undefined
  /** Pre-filled username: what was typed before a failure, or the flow's login hint. */
  username: string
  /** Who is signed in already, when someone is (signing in again replaces that session). */
  signedInAs: string | undefined
  /** The one failure message is shown. */
  failed: boolean
  /** Extra CSP form-action origins the page needs (see ReturnTargetInfo.formActionOrigins). */
  formActionOrigins: string[]
}

export type SignInResult = { ok: true; handle: string; session: Session; location: string } | { ok: false; view: SignInView }

export interface SignInDeps {
  passwordCheck: PasswordCheck
  sessions: SessionService
  targets: ReturnTargets
  /** Where a person goes after signing in without a (valid) return target. */
  accountPath: string
}

/** The longest username kept on the page after a failure (the input is anyone's). */
const KEPT_USERNAME_MAX = 200

export interface SignInService {
  /** The page for GET /account/sign-in?return_to=… */
  show(rawReturnTo: unknown, session: Session | undefined): Promise<SignInView>
  /**
   * Checks the password; on success ends `previousHandle`'s session and starts a new one, and
   * says where to go next. On failure: the page again, with the username kept.
   */
  submit(
    rawReturnTo: unknown,
    form: {
      username?: string | undefined
      password?: string | undefined
    },
    ctx: {
      address: string
      requestId?: string
      previousHandle: string | undefined
      session: Session | undefined
    },
  ): Promise<SignInResult>
}

export function createSignInService(deps: SignInDeps): SignInService {
  function view(target: ReturnTarget | undefined, session: Session | undefined, username: string | undefined, failed: boolean): SignInView {
    return {
      returnTo: target?.location,
      client: target?.client,
      username: (username ?? target?.loginHint ?? '').slice(0, KEPT_USERNAME_MAX),
      signedInAs: session?.username,
      failed,
      formActionOrigins: target?.formActionOrigins ?? [],
    }
  }

  return {
    /** The page for GET /account/sign-in?return_to=… */
    async show(rawReturnTo: unknown, session: Session | undefined): Promise<SignInView> {
      return view(await deps.targets.resolve(rawReturnTo), session, undefined, false)
    },

    /**
     * Checks the password; on success ends `previousHandle`'s session and starts a new one, and
     * says where to go next. On failure: the page again, with the username kept.
     */
    async submit(
      rawReturnTo: unknown,
      form: { username?: string | undefined; password?: string | undefined },
      ctx: { address: string; requestId?: string; previousHandle: string | undefined; session: Session | undefined },
    ): Promise<SignInResult> {
      const target = await deps.targets.resolve(rawReturnTo)
      const username = form.username ?? ''
      const checked = await deps.passwordCheck.check(username, form.password ?? '', {
        address: ctx.address,
        ...(ctx.requestId !== undefined ? { requestId: ctx.requestId } : {}),
        ...(target?.client ? { clientId: target.client.clientId } : {}),
      })
      if (!checked.ok) return { ok: false, view: view(target, ctx.session, username, true) }
      const { user } = checked
      const { handle, session } = await deps.sessions.start(ctx.previousHandle, {
        subjectId: user.subjectId,
        username: user.username,
        amr: ['pwd'],
      })
      return { ok: true, handle, session, location: target?.location ?? deps.accountPath }
    },
  }
}
