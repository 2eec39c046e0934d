// The CIBA approval page (CIBA Core §7.2, the user's side): GET shows the request's decision
// screen, or sends the person to the shared sign-in page (which returns here); POST to the same
// URL carries the decision. The first flow built on the page kit (src/http/page-kit.ts): its own
// page and decision, nothing else.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { PageKit } from '../../http/page-kit.js'
import { approvalUrl, renderApprovalPage } from './pages.js'
import { signInUrl } from '../../pages/sign-in.js'
import { requestIdOf, type ApprovalPage, type CibaApproval } from './approval.js'
import { CIBA_APPROVE_PATH } from '../../endpoints.js'

export interface CibaApproveRouteDeps {
  approval: CibaApproval
  pages: PageKit
}

export const cibaApproveRoutes: FastifyPluginAsync<CibaApproveRouteDeps> = async (app, { approval, pages }) => {
  const requestId = (req: FastifyRequest) => requestIdOf((req.query as Record<string, unknown>).request)
  const here = (id: string | undefined) => (id ? approvalUrl(id) : CIBA_APPROVE_PATH)

  function send(req: FastifyRequest, reply: FastifyReply, page: ApprovalPage, id: string | undefined) {
    if (page.kind === 'sign-in') return pages.toSignIn(reply, here(id))
    if (page.kind === 'step-up') return reply.code(303).headers({ location: page.location, 'cache-control': 'no-store' }).send()
    const needsForm = page.kind === 'decision'
    return pages.send(
      reply,
      renderApprovalPage(page, {
        requestId: id,
        csrf: needsForm ? pages.csrfToken(req, reply) : '',
        signInHref: signInUrl(here(id)),
      }),
    )
  }

  app.get(CIBA_APPROVE_PATH, pages.page, async (req, reply) => {
    const id = requestId(req)
    return send(req, reply, await approval.show(id, await pages.session(req)), id)
  })

  app.post(CIBA_APPROVE_PATH, pages.form(), async (req, reply) => {
    const id = requestId(req)
    return send(
      req,
      reply,
      await approval.decide(id, await pages.session(req), pages.formOf(req).decision, { address: req.ip, requestId: req.id }),
      id,
    )
  })
}
