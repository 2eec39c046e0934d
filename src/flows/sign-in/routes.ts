// The one sign-in page every flow sends a person to (GET and POST /account/sign-in?return_to=…),
// and sign-out (GET asks, POST /account/sign-out does it); the account page it lands on when no
// flow is waiting is the account flow's (src/flows/account). Every form posts to the URL of the page that shows
// it, so a refused form's page can link back to it. Logic in src/interaction/sign-in.ts, pages in src/pages/sign-in.ts.
import type { RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { PageKit } from '../../http/page-kit.js'
import type { UpstreamSignOut } from '../../interaction/identity-providers.js'
import type { Session } from '../../interaction/session.js'
import type { SignInService, SignInView } from '../../interaction/sign-in.js'
import type { PasskeySignIn } from './passkey.js'
import { renderForward, renderSignedOut, renderSignIn, renderSignOut } from '../../pages/sign-in.js'
import { SIGN_IN_PATH, SIGN_OUT_PATH } from '../../endpoints.js'

export interface SignInRouteDeps {
  pages: PageKit
  signIn: SignInService
  /** The passkey offered beside the password form (passkey.ts). */
  passkeySignIn: PasskeySignIn
  /** Per-address limit on the sign-in POST (src/http/rate-limit.ts pageRateLimit); none when undefined. */
  signInRateLimit?: RateLimitOptions | undefined
  upstreamSignOut: UpstreamSignOut
}

export const signInRoutes: FastifyPluginAsync<SignInRouteDeps> = async (
  app,
  { pages, signIn, passkeySignIn, signInRateLimit, upstreamSignOut },
) => {
  /** A sign-out form of a session that began upstream leads on to the upstream's sign-out: its CSP allows that origin. */
  const signOutOrigins = async (session: Session | undefined) => {
    const origin = await upstreamSignOut.origin(session)
    return { formActionOrigins: origin ? [origin] : [] }
  }

  const returnTo = (query: unknown) => (query as Record<string, unknown>).return_to

  /** The page with a passkey sign-in beside the password form, bound to this browser, where one is offered. */
  const withPasskey = async (req: FastifyRequest, reply: FastifyReply, view: SignInView): Promise<SignInView> =>
    view.localLogin && passkeySignIn.available ? { ...view, passkey: await passkeySignIn.offer(pages.browserBinding(req, reply)) } : view

  app.get(SIGN_IN_PATH, pages.page, async (req, reply) => {
    const view = await signIn.show(returnTo(req.query), await pages.session(req))
    // The client signs in through one provider only: straight there (its challenge sends the browser upstream).
    if (view.forward) return reply.code(303).headers({ location: view.forward, 'cache-control': 'no-store' }).send()
    return pages.send(reply, renderSignIn(await withPasskey(req, reply, view), { csrf: pages.csrfToken(req, reply) }), {
      formActionOrigins: view.formActionOrigins,
    })
  })

  app.post(SIGN_IN_PATH, pages.form(signInRateLimit), async (req, reply) => {
    const form = pages.formOf(req)
    const result = await signIn.submit(returnTo(req.query), form, {
      address: req.ip,
      requestId: req.id,
      previousHandle: pages.sessionHandle(req),
      session: await pages.session(req),
      userAgent: req.headers['user-agent'],
    })
    if (!result.ok && 'provider' in result) return pages.send(reply, renderForward(result.provider))
    if (!result.ok) {
      return pages.send(reply, renderSignIn(await withPasskey(req, reply, result.view), { csrf: pages.csrfToken(req, reply) }), {
        formActionOrigins: result.view.formActionOrigins,
      })
    }
    pages.setSession(req, reply, result.handle)
    // 303: the browser follows with a GET, so a reload never posts the password again.
    return reply.code(303).headers({ location: result.location, 'cache-control': 'no-store' }).send()
  })

  app.get(SIGN_OUT_PATH, pages.page, async (req, reply) => {
    const session = await pages.session(req)
    return pages.send(reply, renderSignOut(session, { csrf: session ? pages.csrfToken(req, reply) : '' }), await signOutOrigins(session))
  })

  app.post(SIGN_OUT_PATH, pages.form(), async (req, reply) => {
    const ended = await pages.endSession(req, reply)
    // A session that began upstream ends there too (RP-Initiated Logout 1.0), then comes back here.
    const upstream = ended && (await upstreamSignOut.url(ended, SIGN_OUT_PATH))
    if (upstream) return reply.code(303).headers({ location: upstream, 'cache-control': 'no-store' }).send()
    return pages.send(reply, renderSignedOut())
  })
}
