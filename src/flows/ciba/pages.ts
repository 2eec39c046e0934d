// The CIBA approval pages (OpenID CIBA Core §7.2: the OP authenticates the user and obtains
// consent): the decision screen (src/pages/decision.ts) and the pages that say why there is
// nothing to decide. Sign-in is the shared sign-in page's.
import type { ApprovalPage } from './approval.js'
import { renderDecision } from '../../pages/decision.js'
import { html } from '../../pages/html.js'
import type { LocalizedPage } from '../../pages/layout.js'
import { messagePage } from '../../pages/message.js'
import { CIBA_APPROVE_PATH } from '../../endpoints.js'

/** The approval page of one request; its form posts to the same URL. */
export function approvalUrl(requestId: string): string {
  return `${CIBA_APPROVE_PATH}?request=${encodeURIComponent(requestId)}`
}

export interface ApprovalPageContext {
  requestId: string | undefined
  csrf: string
  /** The sign-in page, returning to this request. */
  signInHref: string
}

/** Status and page for a page model ('sign-in' and 'step-up' are redirects, decided by the route). */
export function renderApprovalPage(page: Exclude<ApprovalPage, { kind: 'sign-in' | 'step-up' }>, ctx: ApprovalPageContext): LocalizedPage {
  return (m) => {
    switch (page.kind) {
      case 'unknown':
        return messagePage({ status: 404, title: m.text('ciba.unknown.title'), text: [m.text('ciba.unknown.text')] })
      case 'expired':
        return messagePage({ status: 410, title: m.text('ciba.expired.title'), text: [m.text('ciba.expired.text')] })
      case 'decided':
        return messagePage({
          status: 410,
          title: m.text(page.status === 'approved' ? 'ciba.decided.approved' : 'ciba.decided.denied'),
          text: [m.text('ciba.decided.text')],
        })
      case 'signed-out':
        return messagePage({
          status: 401,
          title: m.text('common.sessionEnded.title'),
          tone: 'alert',
          text: [m.text('common.sessionEnded.text')],
          action: { href: ctx.signInHref, label: m.text('common.signIn') },
        })
      case 'wrong-user':
        return messagePage({
          status: 403,
          title: m.text('ciba.wrongUser.title'),
          tone: 'alert',
          text: [
            m.html('ciba.wrongUser.text', { user: html`<strong>${page.username}</strong>`, client: page.clientName }),
            m.text('ciba.wrongUser.waiting'),
          ],
          action: { href: ctx.signInHref, label: m.text('ciba.wrongUser.action') },
        })
      case 'decision':
        return {
          status: page.unanswered ? 400 : 200,
          title: m.text('ciba.decision.title'),
          body: renderDecision(
            page.view,
            {
              action: ctx.requestId ? approvalUrl(ctx.requestId) : CIBA_APPROVE_PATH,
              csrf: ctx.csrf,
              switchAccountHref: ctx.signInHref,
              error: page.unanswered ? m.text('common.unanswered') : undefined,
            },
            m,
          ),
        }
      case 'done':
        return page.status === 'approved'
          ? messagePage({
              status: 200,
              title: m.text('ciba.approved.title'),
              tone: 'success',
              text: [m.text('ciba.approved.text', { client: page.clientName })],
            })
          : messagePage({
              status: 200,
              title: m.text('common.denied'),
              tone: 'success',
              text: [m.text('ciba.denied.text', { client: page.clientName })],
            })
    }
  }
}
