// The CIBA approval pages (OpenID CIBA Core §7.2: the OP authenticates the user and obtains
// consent): sign-in, the request details with Approve / Deny, and the final messages.
// Accessible: lang, one h1 per page, a label on every field, errors announced with role=alert.
import type { ApprovalPage, RequestDetails } from '../services/ciba-approval.js'
import { html, layout, type SafeHtml } from './html.js'

export const APPROVE_PATH = '/ciba/approve'
export const SIGN_IN_PATH = '/ciba/approve/sign-in'
export const DECISION_PATH = '/ciba/approve/decision'

const SIGN_IN_ERRORS = {
  'bad-credentials': 'The username or password is incorrect.',
  'wrong-user': 'You signed in as a different user than the one this request is for. The request is still waiting; sign in as the right user to answer it.',
  csrf: 'The form expired. Please sign in again.',
  'signed-out': 'Your session has ended. Please sign in again.',
} as const

function alert(message: string | undefined): SafeHtml | string {
  return message ? html`<p class="error" role="alert">${message}</p>` : ''
}

function signIn(page: Extract<ApprovalPage, { kind: 'sign-in' }>): SafeHtml {
  return html`<h1>Sign in to answer a request</h1>
${alert(page.error ? SIGN_IN_ERRORS[page.error] : undefined)}
<form method="post" action="${SIGN_IN_PATH}?request=${encodeURIComponent(page.requestId)}">
<input type="hidden" name="csrf" value="${page.csrf}">
<label for="username">Username</label>
<input id="username" name="username" type="text" autocomplete="username" required autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`
}

function consent(d: RequestDetails, username: string, csrf: string, error?: string): SafeHtml {
  return html`<h1>${d.clientName} asks for your approval</h1>
${alert(error)}
<p>Signed in as <strong>${username}</strong>.</p>
${d.bindingMessage ? html`<h2>Check this code</h2>
<p>Make sure it matches the code shown on the device that asked:</p>
<p class="binding" id="binding-message">${d.bindingMessage}</p>` : ''}
<h2>It will be able to</h2>
<ul id="scopes">
${d.scopes.map((s) => html`<li>${s.displayName}${s.displayName !== s.name ? html` <small>(${s.name})</small>` : ''}</li>`)}
</ul>
${d.idp ? html`<p>Identity provider: <strong>${d.idp}</strong></p>` : ''}
${d.tenant ? html`<p>Tenant: <strong>${d.tenant}</strong></p>` : ''}
<form method="post" action="${DECISION_PATH}?request=${encodeURIComponent(d.requestId)}">
<input type="hidden" name="csrf" value="${csrf}">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`
}

/** Status and document for a page model. */
export function renderApprovalPage(page: ApprovalPage): { status: number; title: string; body: string } {
  const doc = (status: number, title: string, body: SafeHtml) => ({ status, title, body: layout(title, body) })
  switch (page.kind) {
    case 'unknown':
      return doc(404, 'Request not found', html`<h1>Request not found</h1><p>There is no sign-in request at this address. Check the link you were sent.</p>`)
    case 'expired':
      return doc(410, 'Request expired', html`<h1>This request has expired</h1><p>It can no longer be approved. Start again from the device that asked.</p>`)
    case 'decided':
      return doc(410, 'Request already answered', html`<h1>This request was already ${page.status}</h1><p>Nothing more to do here.</p>`)
    case 'sign-in': {
      const status = page.error === 'bad-credentials' || page.error === 'signed-out' ? 401 : page.error ? 403 : 200
      return doc(status, 'Sign in', signIn(page))
    }
    case 'consent':
      return doc(page.error ? 403 : 200, 'Approve sign-in', consent(page.details, page.username, page.csrf, page.error ? 'The form expired. Please try again.' : undefined))
    case 'done':
      return doc(200, page.status === 'approved' ? 'Approved' : 'Denied', page.status === 'approved'
        ? html`<h1>Approved</h1><p role="status">You approved the request from ${page.clientName}. You can close this page.</p>`
        : html`<h1>Denied</h1><p role="status">You denied the request from ${page.clientName}. You can close this page.</p>`)
  }
}
