// GET /account: the person's own control panel; POST /account: its forms (remove an app's access,
// sign out of another session or of all others), each naming what it does in `action`.
// GET and POST /account/password: the password change. Every POST passes the page kit's Origin and
// CSRF checks first; a person who is not signed in is sent to sign in and brought back.
import type { RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { ACCOUNT_PASSWORD_PATH, ACCOUNT_PATH } from '../../endpoints.js'
import type { PageKit } from '../../http/page-kit.js'
import type { UpstreamSignOut } from '../../interaction/identity-providers.js'
import type { Session } from '../../interaction/session.js'
import { othersEnded, passkeyFailureText, renderAccount, renderPasswordChanged, renderPasswordForm, type Notice } from './pages.js'
import type { AccountPasskeys } from './passkeys.js'
import type { AccountService } from './service.js'

export interface AccountRouteDeps {
  pages: PageKit
  account: AccountService
  passkeys: AccountPasskeys
  /** Per-address limit on the password POST (as on the sign-in POST); none when undefined. */
  passwordRateLimit?: RateLimitOptions | undefined
  upstreamSignOut: UpstreamSignOut
  /**
   * Where a session must go first before these pages (a person with a second factor whose session
   * has not used it: the code page), or undefined when it may stay.
   */
  stepUp?: ((session: Session, returnTo: string) => Promise<string | undefined>) | undefined
}

export const accountRoutes: FastifyPluginAsync<AccountRouteDeps> = async (
  app,
  { pages, account, passkeys, passwordRateLimit, upstreamSignOut, stepUp },
) => {
  const ctx = (req: FastifyRequest) => ({ address: req.ip, requestId: req.id })

  /** The account page, with a result above it; its sign-out form may lead on to the upstream's sign-out. */
  async function show(req: FastifyRequest, reply: FastifyReply, session: Session, notice?: Notice, status = 200) {
    const page = renderAccount(await account.overview(session), { csrf: pages.csrfToken(req, reply), notice }, status)
    const origin = await upstreamSignOut.origin(session)
    return pages.send(reply, page, { formActionOrigins: origin ? [origin] : [] })
  }

  /** The step-up a session needs before the page at `here`, as a redirect; undefined when none. */
  async function stepUpFirst(reply: FastifyReply, session: Session, here: string) {
    const location = await stepUp?.(session, here)
    return location === undefined ? undefined : reply.code(303).headers({ location, 'cache-control': 'no-store' }).send()
  }

  app.get(ACCOUNT_PATH, pages.page, async (req, reply) => {
    const session = await pages.session(req)
    if (!session) return pages.toSignIn(reply, ACCOUNT_PATH)
    const first = await stepUpFirst(reply, session, ACCOUNT_PATH)
    if (first) return first
    return show(req, reply, session)
  })

  app.post(ACCOUNT_PATH, pages.form(), async (req, reply) => {
    const session = await pages.session(req)
    if (!session) return pages.toSignIn(reply, ACCOUNT_PATH)
    const first = await stepUpFirst(reply, session, ACCOUNT_PATH)
    if (first) return first
    const form = pages.formOf(req)
    switch (form.action) {
      case 'revoke-app': {
        const name = form.client_id === undefined ? undefined : await account.revokeApp(session, form.client_id, ctx(req))
        return name === undefined
          ? show(req, reply, session, { tone: 'alert', text: (m) => m.text('account.app.unknown') }, 404)
          : show(req, reply, session, { tone: 'success', text: (m) => m.text('account.app.revoked', { app: name }) })
      }
      case 'end-session': {
        const ended = form.sid !== undefined && (await account.endSession(session, form.sid, ctx(req)))
        return ended
          ? show(req, reply, session, { tone: 'success', text: (m) => m.text('account.session.ended') })
          : show(req, reply, session, { tone: 'alert', text: (m) => m.text('account.session.unknown') }, 404)
      }
      case 'end-other-sessions': {
        const n = await account.endOtherSessions(session, ctx(req))
        return show(req, reply, session, {
          tone: 'success',
          text: (m) => (n > 0 ? othersEnded(m, n) : m.text('account.sessions.noOthers')),
        })
      }
      case 'add-passkey': {
        const added = await passkeys.add(session, form, req.headers['user-agent'], ctx(req))
        return added.ok
          ? show(req, reply, session, { tone: 'success', text: (m) => m.text('account.passkeys.added', { name: added.name }) })
          : show(req, reply, session, { tone: 'alert', text: (m) => passkeyFailureText(m, added.failure) }, 400)
      }
      case 'remove-passkey': {
        const removed = form.credential_id === undefined ? undefined : await passkeys.remove(session, form.credential_id, ctx(req))
        if (!removed) return show(req, reply, session, { tone: 'alert', text: (m) => m.text('account.passkey.unknown') }, 404)
        return show(req, reply, session, {
          tone: 'success',
          text: (m) =>
            [
              m.text('account.passkey.removed', { name: removed.name }),
              removed.sessionsEnded > 0 ? othersEnded(m, removed.sessionsEnded) : '',
            ]
              .filter(Boolean)
              .join(' '),
        })
      }
      default:
        return show(req, reply, session, { tone: 'alert', text: (m) => m.text('account.unknownAction') }, 400)
    }
  })

  app.get(ACCOUNT_PASSWORD_PATH, pages.page, async (req, reply) => {
    const session = await pages.session(req)
    if (!session) return pages.toSignIn(reply, ACCOUNT_PASSWORD_PATH)
    const first = await stepUpFirst(reply, session, ACCOUNT_PASSWORD_PATH)
    if (first) return first
    return pages.send(reply, renderPasswordForm(session, { csrf: pages.csrfToken(req, reply) }))
  })

  app.post(ACCOUNT_PASSWORD_PATH, pages.form(passwordRateLimit), async (req, reply) => {
    const session = await pages.session(req)
    if (!session) return pages.toSignIn(reply, ACCOUNT_PASSWORD_PATH)
    const first = await stepUpFirst(reply, session, ACCOUNT_PASSWORD_PATH)
    if (first) return first
    const result = await account.changePassword(session, pages.formOf(req), ctx(req))
    if (!result.ok) return pages.send(reply, renderPasswordForm(session, { csrf: pages.csrfToken(req, reply), failure: result.failure }))
    return pages.send(reply, renderPasswordChanged(result.sessionsEnded))
  })
}
