// The federation endpoints of each scheme: GET challenge (sends the browser upstream, the target
// of the sign-in page's provider buttons), GET signin (the redirect_uri registered upstream: the
// authorization response arrives by query, OIDC Core §3.1.2.5). Logic in service.ts, pages in pages.ts.
import type { RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import {
  FEDERATION_BACKCHANNEL_LOGOUT_PATH,
  FEDERATION_CHALLENGE_PATH,
  FEDERATION_SIGNIN_PATH,
  FEDERATION_SIGNOUT_CALLBACK_PATH,
} from '../../endpoints.js'
import { withQuery } from '../../http/error-handler.js'
import type { PageKit } from '../../http/page-kit.js'
import { formPostResponse } from '../../pages/form-post.js'
import { renderSignedOut } from '../../pages/sign-in.js'
import type { FederationLogout } from './logout.js'
import { continuePage, failurePage } from './pages.js'
import type { Failure, FederationService } from './service.js'

export interface FederationRouteDeps {
  pages: PageKit
  federation: FederationService
  logout: FederationLogout
  /** Per-address limit on starting a sign-in upstream (each stores a request); none when undefined. */
  challengeRateLimit?: RateLimitOptions | undefined
}

const see = (reply: FastifyReply, location: string) => reply.code(303).headers({ location, 'cache-control': 'no-store' }).send()

export const federationRoutes: FastifyPluginAsync<FederationRouteDeps> = async (app, { pages, federation, logout, challengeRateLimit }) => {
  const schemeOf = (req: FastifyRequest) => (req.params as { scheme: string }).scheme
  const query = (req: FastifyRequest) => (req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '')
  const ctx = (req: FastifyRequest) => ({
    browser: pages.presentedBinding(req),
    address: req.ip,
    requestId: req.id,
    userAgent: req.headers['user-agent'],
  })

  /** The application's error by its redirect URI where its flow gave one, else the page naming the provider. */
  function failed(reply: FastifyReply, f: Failure) {
    if (!f.app) return pages.send(reply, failurePage(f.reason, f.provider))
    if (f.app.formPost) {
      const { headers, body } = formPostResponse(f.app.redirectUri, f.app.params, pages.look, pages.messages(reply.request))
      return reply.code(200).headers(headers).send(body)
    }
    return see(reply, withQuery(f.app.redirectUri, f.app.params))
  }

  const challengeOptions = { config: { errorMode: 'page' as const, ...(challengeRateLimit ? { rateLimit: challengeRateLimit } : {}) } }
  app.get(FEDERATION_CHALLENGE_PATH, challengeOptions, async (req, reply) => {
    const q = req.query as Record<string, unknown>
    const loginHint = typeof q.login_hint === 'string' ? q.login_hint.slice(0, 200) : undefined
    const browser = pages.browserBinding(req, reply)
    const outcome = await federation.challenge(schemeOf(req), q.return_to, loginHint, browser, ctx(req))
    return outcome.kind === 'redirect' ? see(reply, outcome.location) : failed(reply, outcome)
  })

  app.get(FEDERATION_SIGNIN_PATH, pages.page, async (req, reply) => {
    const outcome = await federation.callback(schemeOf(req), query(req), pages.sessionHandle(req), ctx(req))
    if (outcome.kind !== 'signed-in') return failed(reply, outcome)
    pages.setSession(req, reply, outcome.handle)
    // A browser arriving from the upstream's site gets a page (continuePage says why); others the redirect.
    const site = req.headers['sec-fetch-site']
    if (site !== undefined && site !== 'same-origin') return pages.send(reply, continuePage(outcome.location, outcome.provider))
    return see(reply, outcome.location)
  })

  // RP-Initiated Logout 1.0 §3: back from the upstream's sign-out, on to where our logout was going.
  app.get(FEDERATION_SIGNOUT_CALLBACK_PATH, pages.page, async (req, reply) => {
    const next = logout.continuation((req.query as Record<string, unknown>).state as string | undefined)
    return next ? see(reply, next) : pages.send(reply, renderSignedOut())
  })

  // Back-Channel Logout 1.0 §2.8: 200 when the logout token was valid, 400 otherwise.
  app.post(FEDERATION_BACKCHANNEL_LOGOUT_PATH, async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>
    const token = typeof body.logout_token === 'string' ? body.logout_token : undefined
    const ok = await logout.backchannelLogout(schemeOf(req), token)
    reply.headers({ 'cache-control': 'no-store', pragma: 'no-cache' })
    if (ok) return reply.code(200).send()
    return reply.code(400).send({ error: 'invalid_request', error_description: 'the logout token is not valid' })
  })
}
