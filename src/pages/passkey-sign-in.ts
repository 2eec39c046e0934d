// The sign-in with a passkey: its form (on the sign-in page and on its own page) and its own page
// (GET and POST /account/sign-in/passkey?return_to=…), where a person signs in with a passkey
// alone, and where a request that asks for one (acr_values=phr) is sent. The form is a plain
// form posting the browser's WebAuthn answer; the script (src/pages/scripts.ts) runs the
// ceremony. Accessible: the button names what it does, a failure is announced with role=alert and
// the button keeps the focus, and a page without JavaScript says so instead of doing nothing.
import { ACCOUNT_PATH } from '../endpoints.js'
import type { PasskeyOffer } from '../interaction/sign-in.js'
import { alertBox, html } from './html.js'
import type { LocalizedPage } from './layout.js'
import type { Messages } from './messages/index.js'
import { passkeyForm, signInUrl } from './sign-in.js'

export type PasskeyPageProblem = 'failed' | 'expired' | 'no_script' | 'unavailable'

export interface PasskeyPageView {
  returnTo: string | undefined
  client: { clientId: string; clientName: string } | undefined
  /** The sign-in, when passkeys are offered. */
  offer: PasskeyOffer | undefined
  /** Signed in already, with no passkey to step up with: who. */
  withoutPasskey: string | undefined
  /** The request asked for a passkey (acr_values=phr). */
  asked: boolean
  problem: PasskeyPageProblem | undefined
}

function problemText(m: Messages, p: PasskeyPageProblem): string {
  switch (p) {
    case 'failed':
      return m.text('passkey.failed')
    case 'expired':
      return m.text('passkey.expired')
    case 'no_script':
      return m.text('passkey.noScript')
    case 'unavailable':
      return m.text('passkey.unavailable')
  }
}

const STATUS: Record<PasskeyPageProblem, number> = { failed: 401, expired: 400, no_script: 400, unavailable: 404 }

export function renderPasskeySignIn(v: PasskeyPageView, csrf: string): LocalizedPage {
  return (m) => ({
    status: v.problem ? STATUS[v.problem] : 200,
    title: m.text('passkey.title'),
    body: html`<h1>${m.text('passkey.title')}</h1>
${
  v.client && v.asked
    ? html`<p class="lead">${m.html('passkey.asked', { client: html`<strong id="client-name">${v.client.clientName}</strong>` })}</p>`
    : v.client
      ? html`<p class="lead">${m.html('signIn.toClient', { client: html`<strong id="client-name">${v.client.clientName}</strong>` })}</p>`
      : ''
}
${alertBox(v.problem && problemText(m, v.problem))}
${
  v.withoutPasskey
    ? html`<div class="notice" id="no-passkey"><p>${m.text('passkey.none', { user: v.withoutPasskey })}</p></div>
<div class="actions"><a class="button primary" href="${ACCOUNT_PATH}#passkeys">${m.text('passkey.addOne')}</a></div>`
    : ''
}
${v.offer ? html`<p>${m.text('passkey.lead')}</p><noscript><p class="hint">${m.text('passkey.noScript')}</p></noscript>` : ''}
${v.offer ? passkeyForm(m, { offer: v.offer, csrf, returnTo: v.returnTo, autofill: false, primary: !v.withoutPasskey }) : ''}
<p class="below"><a href="${signInUrl(v.returnTo)}" id="with-password">${m.text('passkey.withPassword')}</a></p>`,
    scripts: v.offer ? ['passkeys'] : [],
  })
}
