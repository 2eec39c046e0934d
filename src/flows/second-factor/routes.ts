// GET and POST /account/sign-in/code?return_to=…: the second step of a sign-in (a one-time code,
// or a recovery code). GET and POST /account/two-step?return_to=…: setting up one-time codes; its
// POST also carries the account page's "new recovery codes" and "remove" (`action`). Every POST
// passes the page kit's Origin and CSRF checks and the sign-in rate limit. Logic in service.ts.
import type { RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { ACCOUNT_PATH, ACCOUNT_TWO_STEP_PATH, SECOND_FACTOR_PATH } from '../../endpoints.js'
import type { PageKit } from '../../http/page-kit.js'
import { renderCodePage, renderEnrolPage, renderRecoveryCodes, renderRemoved } from './pages.js'
import type { TwoStepOutcome, TwoStepService } from './service.js'

export interface TwoStepRouteDeps {
  pages: PageKit
  twoStep: TwoStepService
  /** Per-address limit on the POSTs that check a code (as on the sign-in POST); none when undefined. */
  rateLimit?: RateLimitOptions | undefined
}

export const twoStepRoutes: FastifyPluginAsync<TwoStepRouteDeps> = async (app, { pages, twoStep, rateLimit }) => {
  const returnTo = (req: FastifyRequest) => (req.query as Record<string, unknown>).return_to
  const level = (req: FastifyRequest) => (req.query as Record<string, unknown>).level
  const ctx = (req: FastifyRequest) => ({ address: req.ip, requestId: req.id })

  function send(req: FastifyRequest, reply: FastifyReply, outcome: TwoStepOutcome) {
    switch (outcome.kind) {
      case 'sign-in':
        return pages.toSignIn(reply, outcome.returnTo ?? ACCOUNT_PATH)
      case 'redirect':
        return reply.code(303).headers({ location: outcome.location, 'cache-control': 'no-store' }).send()
      case 'code':
        return pages.send(reply, renderCodePage(outcome.view, { csrf: pages.csrfToken(req, reply) }), {
          formActionOrigins: outcome.view.formActionOrigins,
        })
      case 'enrol':
        return pages.send(reply, renderEnrolPage(outcome.view, { csrf: pages.csrfToken(req, reply) }))
      case 'codes':
        return pages.send(reply, renderRecoveryCodes(outcome))
      case 'removed':
        return pages.send(reply, renderRemoved(outcome.sessionsEnded))
    }
  }

  app.get(SECOND_FACTOR_PATH, pages.page, async (req, reply) =>
    send(req, reply, await twoStep.showCode(returnTo(req), await pages.session(req), level(req))),
  )

  app.post(SECOND_FACTOR_PATH, pages.form(rateLimit), async (req, reply) => {
    const form = pages.formOf(req)
    return send(req, reply, await twoStep.submitCode(returnTo(req), await pages.session(req), form, ctx(req), level(req)))
  })

  app.get(ACCOUNT_TWO_STEP_PATH, pages.page, async (req, reply) =>
    send(req, reply, await twoStep.showEnrol(returnTo(req), await pages.session(req))),
  )

  app.post(ACCOUNT_TWO_STEP_PATH, pages.form(rateLimit), async (req, reply) => {
    const form = pages.formOf(req)
    const session = await pages.session(req)
    switch (form.action) {
      case 'regenerate':
        return send(req, reply, await twoStep.regenerate(session, ctx(req)))
      case 'remove':
        return send(req, reply, await twoStep.remove(session, ctx(req)))
      default:
        return send(req, reply, await twoStep.confirm(returnTo(req), session, form, ctx(req)))
    }
  })
}
