// The one sign-in page's logic (every flow sends the person here; src/flows/sign-in/routes.ts is its
// HTTP side). The page names the application that asks (from the return target's flow) before a
// password is typed, keeps the username after a failure, and shows one message for every kind of
// failure (unknown user, wrong password, disabled, locked: PasswordCheck tells them apart for the
// log only), so it cannot be used to learn who has an account. Passwords go through PasswordCheck
// (lockout, throttling, failure logs). A success starts a new session (src/interaction/session.ts).
import { challengeUrl, LOCAL_IDP, providerForEmail, type IdentityProviderDirectory } from './identity-providers.js'
import type { PasswordCheck } from './password-check.js'
import type { ReturnTarget, ReturnTargets } from './return-to.js'
import type { Session, SessionService } from './session.js'
import type { UserFactorStore } from '../stores/user-factors.js'
import { heldFactors, holdsFactor, stepUpUrl } from './authentication-level.js'
import type { Passkeys } from './passkeys.js'

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
  /** A button per identity provider the client may use: its name and the link that starts its sign-in. */
  providers: { scheme: string; displayName: string; href: string }[]
  /** The password form is offered (the client's enableLocalLogin, and no `idp:` naming a provider). */
  localLogin: boolean
  /** An offered provider has emailDomains: the password may be left empty to be forwarded by email domain. */
  discovery: boolean
  /** Where to go at once instead of showing the page: local login off and exactly one provider. */
  forward: string | undefined
  /** A sign-in with a passkey, when offered (src/interaction/passkeys.ts): the WebAuthn options as JSON. */
  passkey?: PasskeyOffer | undefined
}

/** A passkey sign-in on a page: the WebAuthn request options (JSON) its script hands to the browser. */
export interface PasskeyOffer {
  options: string
}

export type SignInResult =
  | { ok: true; handle: string; session: Session; location: string }
  | { ok: false; view: SignInView }
  /** Home-realm discovery: the typed email's domain belongs to this provider. */
  | { ok: false; provider: { displayName: string; href: string } }

export interface SignInDeps {
  passwordCheck: PasswordCheck
  sessions: SessionService
  targets: ReturnTargets
  providers: IdentityProviderDirectory
  /** Where a person goes after signing in without a (valid) return target. */
  accountPath: string
  /** Whether the person has a second factor: they are asked for it after the password. */
  factors?: Pick<UserFactorStore, 'hasFactor'> | undefined
  /** Their passkeys, a second factor too where passkeys are offered. */
  passkeys?: Pick<Passkeys, 'available' | 'list'> | undefined
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
      /** The request's User-Agent, kept with the new session (the account page names the device by it). */
      userAgent?: string | undefined
    },
  ): Promise<SignInResult>
}

export function createSignInService(deps: SignInDeps): SignInService {
  /** The providers the target's client may use (only the one `idp:` named, none for `idp:local`), and whether the password form shows. */
  async function choices(target: ReturnTarget | undefined) {
    const policy = target?.providers
    const idp = policy?.idp
    const usable = idp === LOCAL_IDP ? [] : (await deps.providers.usable(policy)).filter((p) => idp === undefined || p.scheme === idp)
    return { usable, localLogin: (policy?.enableLocalLogin ?? true) && (idp === undefined || idp === LOCAL_IDP) }
  }

  async function view(
    target: ReturnTarget | undefined,
    session: Session | undefined,
    username: string | undefined,
    failed: boolean,
  ): Promise<SignInView> {
    const { usable, localLogin } = await choices(target)
    const providers = usable.map((p) => ({ scheme: p.scheme, displayName: p.displayName, href: challengeUrl(p.scheme, target?.location) }))
    return {
      returnTo: target?.location,
      client: target?.client,
      username: (username ?? target?.loginHint ?? '').slice(0, KEPT_USERNAME_MAX),
      signedInAs: session?.username,
      failed,
      formActionOrigins: target?.formActionOrigins ?? [],
      providers,
      localLogin,
      discovery: localLogin && usable.some((p) => p.emailDomains.length > 0),
      forward: !localLogin && providers.length === 1 ? providers[0]!.href : undefined,
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
      ctx: {
        address: string
        requestId?: string
        previousHandle: string | undefined
        session: Session | undefined
        userAgent?: string | undefined
      },
    ): Promise<SignInResult> {
      const target = await deps.targets.resolve(rawReturnTo)
      const username = form.username ?? ''
      const { usable, localLogin } = await choices(target)
      // Home-realm discovery (username first): an address of a provider's domain and no password.
      const home = (form.password ?? '') === '' ? providerForEmail(usable, username.trim()) : undefined
      if (home)
        return {
          ok: false,
          provider: { displayName: home.displayName, href: challengeUrl(home.scheme, target?.location, username.trim()) },
        }
      if (!localLogin) return { ok: false, view: await view(target, ctx.session, username, true) }
      const checked = await deps.passwordCheck.check(username, form.password ?? '', {
        address: ctx.address,
        ...(ctx.requestId !== undefined ? { requestId: ctx.requestId } : {}),
        ...(target?.client ? { clientId: target.client.clientId } : {}),
      })
      if (!checked.ok) return { ok: false, view: await view(target, ctx.session, username, true) }
      const { user } = checked
      const { handle, session } = await deps.sessions.start(ctx.previousHandle, {
        subjectId: user.subjectId,
        username: user.username,
        amr: ['pwd'],
        userAgent: ctx.userAgent,
      })
      // A person with a second factor (one-time codes, or a passkey where passkeys are offered) is
      // always asked for it after the password; a person who must have one (requireMfa) and has
      // none sets one up first. The request is checked again on return.
      const held = deps.factors && holdsFactor(await heldFactors({ factors: deps.factors, passkeys: deps.passkeys }, user.subjectId))
      const step = held ? 'second-factor' : user.requireMfa ? 'enrol' : undefined
      const next = target?.location ?? deps.accountPath
      return { ok: true, handle, session, location: step ? stepUpUrl(step, next) : next }
    },
  }
}
