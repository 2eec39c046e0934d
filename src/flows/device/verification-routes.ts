// GET /device (RFC 8628 §3.3 verification_uri, with `user_code` in the query the
// verification_uri_complete of §3.3.1) shows the code entry form, the decision screen, or sends
// the person to the shared sign-in page (which returns here); POST to the same URL carries the
// decision. Built on the page kit (src/http/page-kit.ts): its own page and decision, nothing else.
import { stepUpUrl } from '../../interaction/authentication-level.js'
import type { RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { fromAnotherSite } from '../../http/fetch-metadata.js'
import type { PageKit } from '../../http/page-kit.js'
import { deviceReturnTarget, renderDevicePage } from './pages.js'
import type { DevicePage, DeviceVerification } from './verification.js'
import { DEVICE_PATH } from '../../endpoints.js'

export interface DeviceRouteDeps {
  verification: DeviceVerification
  pages: PageKit
  /** Per-address flood limit of the page (the wrong-code throttle is the service's). */
  rateLimit?: RateLimitOptions | undefined
}

export const deviceRoutes: FastifyPluginAsync<DeviceRouteDeps> = async (app, { verification, pages, rateLimit }) => {
  const typed = (req: FastifyRequest) => {
    const v = (req.query as Record<string, unknown>).user_code
    return typeof v === 'string' ? v : undefined
  }

  function send(req: FastifyRequest, reply: FastifyReply, page: DevicePage) {
    if (page.kind === 'sign-in') return pages.toSignIn(reply, deviceReturnTarget(page.userCode, page.requestId))
    if (page.kind === 'step-up') {
      const location = stepUpUrl(page.step, deviceReturnTarget(page.userCode, page.requestId))
      return reply.code(303).headers({ location, 'cache-control': 'no-store' }).send()
    }
    if (page.kind === 'blocked') reply.header('retry-after', String(page.retryAfter)) // RFC 6585 §4
    return pages.send(reply, renderDevicePage(page, { csrf: page.kind === 'decision' ? pages.csrfToken(req, reply) : '' }))
  }

  app.get(DEVICE_PATH, { ...pages.page, config: { ...pages.page.config, ...(rateLimit ? { rateLimit } : {}) } }, async (req, reply) => {
    return send(
      req,
      reply,
      await verification.show(typed(req), await pages.session(req), req.ip, { fromAnotherSite: fromAnotherSite(req) }),
    )
  })

  app.post(DEVICE_PATH, pages.form(rateLimit), async (req, reply) => {
    return send(req, reply, await verification.decide(typed(req), await pages.session(req), req.ip, pages.formOf(req).decision))
  })
}
