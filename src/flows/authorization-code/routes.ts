// GET and POST /connect/authorize (RFC 6749 §3.1: both methods; OIDC Core §3.1.2.1), and the
// consent screen's URL /connect/authorize/consent (GET shows it again, POST carries the decision).
// Errors: a page until the client and its redirect URI are known to belong together; after that,
// back to the redirect URI with error, error_description, state and iss (RFC 9207), by query or
// form_post as the request asked. Logic in src/flows/authorization-code/service.ts.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { OAuthError } from '../../errors.js'
import { setErrorRedirect, withQuery } from '../../http/error-handler.js'
import type { PageKit } from '../../http/page-kit.js'
import { formPostResponse } from '../../pages/form-post.js'
import { renderConsent } from './pages.js'
import { signInUrl } from '../../pages/sign-in.js'
import type { RawParams } from '../../interaction/authorization-request.js'
import { type AuthorizeOutcome, type AuthorizeService } from './service.js'
import { AUTHORIZE_PATH, AUTHORIZE_CONSENT_PATH } from '../../endpoints.js'

export interface AuthorizeRouteDeps {
  authorize: AuthorizeService
  pages: PageKit
}

/** The query string's parameters, each occurrence kept (a repeated one is an error, not a choice). */
function queryParams(req: FastifyRequest): RawParams {
  const i = req.url.indexOf('?')
  return i < 0 ? [] : [...new URLSearchParams(req.url.slice(i + 1))]
}

/** A POSTed form's parameters (RFC 6749 §3.1), each occurrence kept. */
function bodyParams(req: FastifyRequest): RawParams {
  const type = req.headers['content-type']
  if (typeof type !== 'string' || type.split(';')[0]!.trim().toLowerCase() !== 'application/x-www-form-urlencoded') {
    throw new OAuthError('invalid_request', 'the request body must be application/x-www-form-urlencoded')
  }
  const body = (req.body ?? {}) as Record<string, unknown>
  const out: RawParams = []
  for (const [k, v] of Object.entries(body)) for (const x of Array.isArray(v) ? v : [v]) if (typeof x === 'string') out.push([k, x])
  return out
}

const REDIRECT_MODE = { config: { errorMode: 'redirect' as const } }

export const authorizeRoutes: FastifyPluginAsync<AuthorizeRouteDeps> = async (app, { authorize, pages }) => {
  async function send(req: FastifyRequest, reply: FastifyReply, outcome: AuthorizeOutcome) {
    switch (outcome.kind) {
      case 'sign-in':
        return pages.toSignIn(reply, outcome.returnTo)
      case 'step-up':
        return reply.code(303).headers({ location: outcome.location, 'cache-control': 'no-store' }).send()
      case 'consent':
        return pages.send(
          reply,
          renderConsent(outcome.view, {
            action: outcome.action,
            csrf: pages.csrfToken(req, reply),
            switchAccountHref: signInUrl(outcome.switchAccount),
          }),
          { formActionOrigins: [new URL(outcome.target.redirectUri).origin] },
        )
      case 'respond': {
        const { target, params } = outcome
        if (target.responseMode === 'form_post') {
          const { headers, body } = formPostResponse(target.redirectUri, params, pages.look, pages.messages(req))
          return reply.code(200).headers(headers).send(body)
        }
        return reply
          .code(303)
          .headers({ location: withQuery(target.redirectUri, params), 'cache-control': 'no-store' })
          .send()
      }
    }
  }

  async function start(req: FastifyRequest, reply: FastifyReply, raw: RawParams) {
    const resolved = await authorize.target(raw) // a page error until here
    setErrorRedirect(req, resolved.target)
    return send(req, reply, await authorize.start(resolved, await pages.session(req)))
  }

  app.get(AUTHORIZE_PATH, REDIRECT_MODE, (req, reply) => start(req, reply, queryParams(req)))
  app.post(AUTHORIZE_PATH, REDIRECT_MODE, (req, reply) => start(req, reply, bodyParams(req)))
  app.get(AUTHORIZE_CONSENT_PATH, REDIRECT_MODE, (req, reply) => start(req, reply, queryParams(req)))

  const consentForm = pages.form()
  app.post(AUTHORIZE_CONSENT_PATH, { ...consentForm, config: { ...consentForm.config, errorMode: 'redirect' } }, async (req, reply) => {
    const raw = queryParams(req)
    const resolved = await authorize.target(raw)
    setErrorRedirect(req, resolved.target)
    return send(req, reply, await authorize.decide(resolved, await pages.session(req), pages.formOf(req)))
  })
}
