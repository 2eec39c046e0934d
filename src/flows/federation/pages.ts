// The pages of a sign-in through an upstream provider that did not end in a session: each says
// which provider it was and what the person can do, never a 5xx (the upstream failing is not
// our server failing), never JSON. Statuses: 400 for a response we cannot accept, 403 for a
// sign-in refused, 424 (RFC 4918 §11.4, Failed Dependency) for an upstream that failed.
import { ACCOUNT_PATH } from '../../endpoints.js'
import { html } from '../../pages/html.js'
import { messagePage } from '../../pages/message.js'
import type { LocalizedPage } from '../../pages/layout.js'
import type { FailureReason } from './service.js'

export function failurePage(reason: FailureReason, provider: string | undefined): LocalizedPage {
  return (m) => {
    const name = provider ?? m.text('federation.someProvider')
    const startAgain = m.text('federation.startAgain')
    const page = (status: number, title: string, ...text: string[]) =>
      messagePage({ status, title, tone: 'alert', text, action: { href: ACCOUNT_PATH, label: m.text('federation.signInAgain') } })
    switch (reason) {
      case 'unknown':
        return page(404, m.text('federation.unknown.title'), m.text('federation.unknown.text'), startAgain)
      case 'not_allowed':
        return page(403, m.text('federation.unavailable.title'), m.text('federation.notAllowed', { provider: name }), startAgain)
      case 'disabled':
        return page(403, m.text('federation.unavailable.title'), m.text('federation.disabled', { provider: name }), startAgain)
      case 'invalid_state':
        return page(400, m.text('federation.incomplete.title'), m.text('federation.invalidState', { provider: name }), startAgain)
      case 'invalid_response':
        return page(400, m.text('federation.incomplete.title'), m.text('federation.invalidResponse', { provider: name }), startAgain)
      case 'cancelled':
        return page(403, m.text('federation.cancelled.title'), m.text('federation.cancelled.text', { provider: name }), startAgain)
      case 'account_disabled':
        return page(403, m.text('federation.accountDisabled.title'), m.text('federation.accountDisabled.text'))
      case 'upstream_error':
      case 'unavailable':
        return page(
          424,
          m.text('federation.upstream.title', { provider: name }),
          m.text(reason === 'unavailable' ? 'federation.upstream.timeout' : 'federation.upstream.error', { provider: name }),
        )
    }
  }
}

/**
 * After the upstream's answer, in a browser that came from the upstream: the way on as a page
 * (meta refresh, and a link), not a redirect. A browser applies the CSP form-action of the page
 * whose form started a navigation to every redirect that follows it, so an upstream whose sign-in
 * form allows only its own origin and ours would block the last hop to the application's redirect
 * URI. A page ends that chain; no script is needed.
 */
export function continuePage(location: string, provider: string): LocalizedPage {
  return (m) => ({
    status: 200,
    title: m.text('federation.signedIn.title'),
    body: html`<meta http-equiv="refresh" content="0;url=${location}">
<h1>${m.text('federation.signedIn.title')}</h1>
<p>${m.text('federation.signedIn.text', { provider })}</p>
<div class="actions"><a class="button primary" href="${location}">${m.text('common.continue')}</a></div>`,
  })
}
