// The CIBA approval pages (OpenID CIBA Core §7.2: the OP authenticates the user and obtains
// consent): the decision screen (src/pages/decision.ts) and the pages that say why there is
// nothing to decide. Sign-in is the shared sign-in page's.
import type { ApprovalPage } from './approval.js'
import { renderDecision } from '../../pages/decision.js'
import { html, type Page } from '../../pages/html.js'
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

/** Status and page for a page model ('sign-in' is a redirect, decided by the route). */
export function renderApprovalPage(page: Exclude<ApprovalPage, { kind: 'sign-in' }>, ctx: ApprovalPageContext): Page {
  switch (page.kind) {
    case 'unknown':
      return messagePage({
        status: 404,
        title: 'Request not found',
        text: ['There is no sign-in request at this address. Check the link you were sent.'],
      })
    case 'expired':
      return messagePage({
        status: 410,
        title: 'This request has expired',
        text: ['It can no longer be approved. Start again from the device that asked.'],
      })
    case 'decided':
      return messagePage({ status: 410, title: `This request was already ${page.status}`, text: ['Nothing more to do here.'] })
    case 'signed-out':
      return messagePage({
        status: 401,
        title: 'Your session has ended',
        tone: 'alert',
        text: ['Your session has ended. Please sign in again to answer the request. Nothing was changed.'],
        action: { href: ctx.signInHref, label: 'Sign in' },
      })
    case 'wrong-user':
      return messagePage({
        status: 403,
        title: 'This request is for another account',
        tone: 'alert',
        text: [
          html`You are signed in as <strong>${page.username}</strong>, but ${page.clientName} asked for someone else's approval.`,
          'The request is still waiting: sign in as the right user to answer it.',
        ],
        action: { href: ctx.signInHref, label: 'Sign in as someone else' },
      })
    case 'decision':
      return {
        status: page.unanswered ? 400 : 200,
        title: 'Approve sign-in',
        body: renderDecision(page.view, {
          action: ctx.requestId ? approvalUrl(ctx.requestId) : CIBA_APPROVE_PATH,
          csrf: ctx.csrf,
          switchAccountHref: ctx.signInHref,
          error: page.unanswered ? 'Choose Approve or Deny.' : undefined,
        }),
      }
    case 'done':
      return page.status === 'approved'
        ? messagePage({
            status: 200,
            title: 'Approved',
            tone: 'success',
            text: [`You approved the request from ${page.clientName}. You can close this page.`],
          })
        : messagePage({
            status: 200,
            title: 'Denied',
            tone: 'success',
            text: [`You denied the request from ${page.clientName}. You can close this page.`],
          })
  }
}
