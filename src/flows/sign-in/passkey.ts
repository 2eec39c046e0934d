// The sign-in with a passkey alone (WebAuthn Level 3 §7.2), beside the password form: what the
// sign-in page and the passkey page offer, and what a posted answer leads to. The ceremony's checks
// and the lockout are src/interaction/passkeys.ts's; this file adds the pages' side: the return
// target (the application that asks, and where to go next), the offer bound to this browser, and
// a new session whose amr says a passkey was used (RFC 8176). A person signed in already who has no
// passkey (a request asking for one: acr_values=phr) is told so and led to add one.
import type { Passkeys, PasskeyFailure } from '../../interaction/passkeys.js'
import { LOCAL_IDP } from '../../interaction/identity-providers.js'
import type { ReturnTarget, ReturnTargets } from '../../interaction/return-to.js'
import type { Session, SessionService } from '../../interaction/session.js'
import type { PasskeyOffer } from '../../interaction/sign-in.js'
import type { PasskeyPageProblem, PasskeyPageView } from '../../pages/passkey-sign-in.js'

export interface PasskeySignInDeps {
  passkeys: Passkeys
  sessions: SessionService
  targets: ReturnTargets
  accountPath: string
}

export type PasskeySignInResult = { ok: true; handle: string; session: Session; location: string } | { ok: false; view: PasskeyPageView }

/** As the sign-in page decides it: passkeys are local accounts, offered where the password form is. */
function localLogin(target: ReturnTarget | undefined): boolean {
  const policy = target?.providers
  return (policy?.enableLocalLogin ?? true) && (policy?.idp === undefined || policy.idp === LOCAL_IDP)
}

/** Whether the request the person returns to asks for a passkey (acr_values phr). */
function asksForPasskey(target: ReturnTarget | undefined): boolean {
  if (!target) return false
  const acr = new URL(target.location, 'http://local').searchParams.get('acr_values') ?? ''
  return acr.split(' ').includes('phr')
}

const PROBLEMS: Partial<Record<PasskeyFailure, PasskeyPageProblem>> = { challenge: 'expired', unavailable: 'unavailable' }

export function createPasskeySignIn(deps: PasskeySignInDeps) {
  const { passkeys } = deps

  /** The offer bound to this browser (`binding`: its binding cookie), when passkeys are offered. */
  async function offer(binding: string): Promise<PasskeyOffer | undefined> {
    return passkeys.available ? { options: JSON.stringify(await passkeys.signInOptions(binding)) } : undefined
  }

  async function view(rawReturnTo: unknown, binding: string, session: Session | undefined, problem?: PasskeyPageProblem) {
    const target = await deps.targets.resolve(rawReturnTo)
    const usable = passkeys.available && localLogin(target)
    const none = usable && session !== undefined && (await passkeys.list(session.subjectId)).length === 0
    return {
      returnTo: target?.location,
      client: target?.client,
      offer: usable ? await offer(binding) : undefined,
      withoutPasskey: none ? session.username : undefined,
      asked: asksForPasskey(target),
      problem: problem ?? (usable ? undefined : 'unavailable'),
    } satisfies PasskeyPageView
  }

  return {
    offer,
    /** Whether passkeys are offered at all: only then is a browser given its binding cookie for one. */
    available: passkeys.available,
    /** GET: the passkey page. */
    show: (rawReturnTo: unknown, binding: string, session: Session | undefined) => view(rawReturnTo, binding, session),

    /** POST: the browser's answer; a new session on success, else the page again with what went wrong. */
    async submit(
      rawReturnTo: unknown,
      form: { webauthn_response?: string | undefined },
      ctx: {
        binding: string
        address: string
        requestId: string
        previousHandle: string | undefined
        session: Session | undefined
        userAgent: string | undefined
      },
    ): Promise<PasskeySignInResult> {
      if (!form.webauthn_response) return { ok: false, view: await view(rawReturnTo, ctx.binding, ctx.session, 'no_script') }
      const target = await deps.targets.resolve(rawReturnTo)
      if (!localLogin(target)) return { ok: false, view: await view(rawReturnTo, ctx.binding, ctx.session, 'unavailable') }
      const result = await passkeys.signIn(ctx.binding, form.webauthn_response, {
        address: ctx.address,
        requestId: ctx.requestId,
        clientId: target?.client?.clientId,
      })
      if (!result.ok) return { ok: false, view: await view(rawReturnTo, ctx.binding, ctx.session, PROBLEMS[result.reason] ?? 'failed') }
      const { handle, session } = await deps.sessions.start(ctx.previousHandle, {
        subjectId: result.user.subjectId,
        username: result.user.username,
        amr: result.amr,
        userAgent: ctx.userAgent,
      })
      return { ok: true, handle, session, location: target?.location ?? deps.accountPath }
    },
  }
}

export type PasskeySignIn = ReturnType<typeof createPasskeySignIn>
