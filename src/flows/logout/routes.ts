// GET and POST /connect/endsession (OpenID Connect RP-Initiated Logout 1.0 §2), and the
// confirmation form's URL /connect/endsession/confirm. Errors are pages: a logout request never
// redirects anywhere it has not proven it may. Logic in src/flows/logout/service.ts.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { OAuthError } from '../../errors.js'
import type { PageKit } from '../../http/page-kit.js'
import { renderLogoutConfirm } from './pages.js'
import { renderSignedOut } from '../../pages/sign-in.js'
import { type EndSessionOutcome, type EndSessionService } from './service.js'
import { END_SESSION_PATH, END_SESSION_CONFIRM_PATH, SIGN_OUT_PATH } from '../../endpoints.js'
import type { UpstreamSignOut } from '../../interaction/identity-providers.js'

export interface EndSessionRouteDeps {
  endSession: EndSessionService
  pages: PageKit
  upstreamSignOut: UpstreamSignOut
}

const query = (req: FastifyRequest) => {
  const i = req.url.indexOf('?')
  return i < 0 ? '' : req.url.slice(i + 1)
}

function bodyParams(req: FastifyRequest): Array<[string, string]> {
  const type = req.headers['content-type']
  if (typeof type !== 'string' || type.split(';')[0]!.trim().toLowerCase() !== 'application/x-www-form-urlencoded') {
    throw new OAuthError('invalid_request', 'the request body must be application/x-www-form-urlencoded')
  }
  const out: Array<[string, string]> = []
  for (const [k, v] of Object.entries((req.body ?? {}) as Record<string, unknown>))
    for (const x of [v].flat()) if (typeof x === 'string') out.push([k, x])
  return out
}

export const endSessionRoutes: FastifyPluginAsync<EndSessionRouteDeps> = async (app, { endSession, pages, upstreamSignOut }) => {
  const see = (reply: FastifyReply, location: string) => reply.code(303).headers({ location, 'cache-control': 'no-store' }).send()

  async function send(req: FastifyRequest, reply: FastifyReply, outcome: EndSessionOutcome) {
    if (outcome.kind === 'confirm') {
      // A session that began upstream: the confirmed form's answer goes on to the upstream's sign-out.
      const upstream = await upstreamSignOut.origin(await pages.session(req))
      return pages.send(reply, renderLogoutConfirm(outcome, { action: outcome.action, csrf: pages.csrfToken(req, reply) }), {
        formActionOrigins: [...outcome.formActionOrigins, ...(upstream ? [upstream] : [])],
      })
    }
    const ended = await pages.endSession(req, reply)
    // RP-Initiated Logout 1.0 at the upstream, then on to where this logout was going.
    const upstream = ended && (await upstreamSignOut.url(ended, outcome.redirectTo ?? SIGN_OUT_PATH))
    if (upstream) return see(reply, upstream)
    if (outcome.redirectTo) return see(reply, outcome.redirectTo)
    return pages.send(reply, renderSignedOut())
  }

  const start = async (req: FastifyRequest, reply: FastifyReply, raw: Array<[string, string]>, q: string, method: 'GET' | 'POST') =>
    send(req, reply, await endSession.start(raw, await pages.session(req), q, method))

  app.get(END_SESSION_PATH, pages.page, (req, reply) => start(req, reply, [...new URLSearchParams(query(req))], query(req), 'GET'))
  app.get(END_SESSION_CONFIRM_PATH, pages.page, (req, reply) => start(req, reply, [...new URLSearchParams(query(req))], query(req), 'GET'))
  app.post(END_SESSION_PATH, pages.page, (req, reply) => {
    const raw = bodyParams(req)
    return start(req, reply, raw, new URLSearchParams(raw).toString(), 'POST')
  })
  app.post(END_SESSION_CONFIRM_PATH, pages.form(), async (req, reply) =>
    send(req, reply, await endSession.confirm([...new URLSearchParams(query(req))], await pages.session(req))),
  )
}
