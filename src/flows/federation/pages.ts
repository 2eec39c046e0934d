// The pages of a sign-in through an upstream provider that did not end in a session: each says
// which provider it was and what the person can do, never a 5xx (the upstream failing is not
// our server failing), never JSON. Statuses: 400 for a response we cannot accept, 403 for a
// sign-in refused, 424 (RFC 4918 §11.4, Failed Dependency) for an upstream that failed.
import { ACCOUNT_PATH } from '../../endpoints.js'
import { html } from '../../pages/html.js'
import { messagePage } from '../../pages/message.js'
import type { Page } from '../../pages/html.js'
import type { FailureReason } from './service.js'

const START_AGAIN = 'Go back to the application you came from and start again.'

export function failurePage(reason: FailureReason, provider: string | undefined): Page {
  const name = provider ?? 'The identity provider'
  const page = (status: number, title: string, ...text: string[]) =>
    messagePage({ status, title, tone: 'alert', text, action: { href: ACCOUNT_PATH, label: 'Sign in again' } })
  switch (reason) {
    case 'unknown':
      return page(404, 'Sign-in option not found', 'There is no such way to sign in here.', START_AGAIN)
    case 'not_allowed':
      return page(403, 'Sign-in option not available', `${name} cannot be used to sign in to this application.`, START_AGAIN)
    case 'disabled':
      return page(403, 'Sign-in option not available', `Signing in with ${name} is turned off at the moment.`, START_AGAIN)
    case 'invalid_state':
      return page(
        400,
        'This sign-in cannot be completed',
        `The answer from ${name} does not belong to a sign-in started in this browser, has expired, or was used already. You are not signed in.`,
        START_AGAIN,
      )
    case 'invalid_response':
      return page(
        400,
        'This sign-in cannot be completed',
        `The answer from ${name} could not be verified, so it was not accepted. You are not signed in.`,
        START_AGAIN,
      )
    case 'cancelled':
      return page(403, 'Sign-in cancelled', `The sign-in with ${name} was cancelled or refused. You are not signed in.`, START_AGAIN)
    case 'account_disabled':
      return page(403, 'Account disabled', 'The account you signed in with cannot be used here at the moment. You are not signed in.')
    case 'upstream_error':
    case 'unavailable':
      return page(
        424,
        `${name} is not available`,
        `${name} did not complete the sign-in${reason === 'unavailable' ? ' in time' : ''}. You are not signed in. Please try again in a moment.`,
      )
  }
}

/**
 * After the upstream's answer, in a browser that came from the upstream: the way on as a page
 * (meta refresh, and a link), not a redirect. A browser applies the CSP form-action of the page
 * whose form started a navigation to every redirect that follows it, so an upstream whose sign-in
 * form allows only its own origin and ours would block the last hop to the application's redirect
 * URI. A page ends that chain; no script is needed.
 */
export function continuePage(location: string, provider: string): Page {
  return {
    status: 200,
    title: 'Signed in',
    body: html`<meta http-equiv="refresh" content="0;url=${location}">
<h1>Signed in</h1>
<p>You signed in with ${provider}. Taking you back…</p>
<div class="actions"><a class="button primary" href="${location}">Continue</a></div>`,
  }
}
