// GET /account/sign-in/passkey?return_to=…: the sign-in with a passkey alone (also where a request
// asking for one is sent); POST: the browser's WebAuthn answer, through the page kit's Origin and
// CSRF checks and the sign-in page's rate limit. The offer is bound to the browser's own binding
// cookie, so an answer made for another browser's page is refused. Logic in passkey.ts.
import type { RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyPluginAsync } from 'fastify'
import { PASSKEY_SIGN_IN_PATH } from '../../endpoints.js'
import type { PageKit } from '../../http/page-kit.js'
import { renderPasskeySignIn } from '../../pages/passkey-sign-in.js'
import type { PasskeySignIn } from './passkey.js'

export interface PasskeyRouteDeps {
  pages: PageKit
  passkeySignIn: PasskeySignIn
  signInRateLimit?: RateLimitOptions | undefined
}

export const passkeyRoutes: FastifyPluginAsync<PasskeyRouteDeps> = async (app, { pages, passkeySignIn, signInRateLimit }) => {
  const returnTo = (query: unknown) => (query as Record<string, unknown>).return_to

  app.get(PASSKEY_SIGN_IN_PATH, pages.page, async (req, reply) => {
    const view = await passkeySignIn.show(returnTo(req.query), pages.browserBinding(req, reply), await pages.session(req))
    return pages.send(reply, renderPasskeySignIn(view, pages.csrfToken(req, reply)))
  })

  app.post(PASSKEY_SIGN_IN_PATH, pages.form(signInRateLimit), async (req, reply) => {
    const result = await passkeySignIn.submit(returnTo(req.query), pages.formOf(req), {
      binding: pages.browserBinding(req, reply),
      address: req.ip,
      requestId: req.id,
      previousHandle: pages.sessionHandle(req),
      session: await pages.session(req),
      userAgent: req.headers['user-agent'],
    })
    if (!result.ok) return pages.send(reply, renderPasskeySignIn(result.view, pages.csrfToken(req, reply)))
    pages.setSession(req, reply, result.handle)
    // 303: the browser follows with a GET, so a reload never posts the answer again.
    return reply.code(303).headers({ location: result.location, 'cache-control': 'no-store' }).send()
  })
}
