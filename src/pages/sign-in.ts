// The one sign-in page (src/interaction/sign-in.ts has its logic), and the sign-out pages. Accessible: one h1, a label on every field, the failure announced with
// role=alert, autocomplete hints so password managers fill the right fields.
import type { PasskeyOffer, SignInView } from '../interaction/sign-in.js'
import { alertBox, html, type SafeHtml } from './html.js'
import type { LocalizedPage } from './layout.js'
import type { Messages } from './messages/index.js'
import { en } from './messages/en.js'
import { PASSKEY_SIGN_IN_PATH, SIGN_IN_PATH, SIGN_OUT_PATH } from '../endpoints.js'

/** The sign-in page's URL, returning to `returnTo` afterwards. */
export function signInUrl(returnTo?: string): string {
  return returnTo ? `${SIGN_IN_PATH}?return_to=${encodeURIComponent(returnTo)}` : SIGN_IN_PATH
}

/** The passkey page's URL, returning to `returnTo` afterwards. */
export function passkeySignInUrl(returnTo?: string): string {
  return returnTo ? `${PASSKEY_SIGN_IN_PATH}?return_to=${encodeURIComponent(returnTo)}` : PASSKEY_SIGN_IN_PATH
}

/**
 * The form: its button starts the ceremony; `autofill` also offers the passkeys in the username
 * field's suggestions (conditional mediation), on the page that has one.
 */
export function passkeyForm(
  m: Messages,
  o: { offer: PasskeyOffer; csrf: string; returnTo: string | undefined; autofill: boolean; primary: boolean },
): SafeHtml {
  return html`<form method="post" action="${passkeySignInUrl(o.returnTo)}" class="passkey" data-passkey="sign-in"${o.autofill ? html` data-autofill` : ''} data-options="${o.offer.options}">
<input type="hidden" name="csrf" value="${o.csrf}">
<input type="hidden" name="webauthn_response" value="">
<div class="alert" role="alert" data-passkey-error data-text="${m.text('passkey.failed')}" hidden><p></p></div>
<div class="actions"><button class="button ${o.primary ? 'primary' : 'secondary'}" type="submit" id="passkey-sign-in">${m.text('passkey.signIn')}</button></div>
</form>`
}

/** The same words for every failure: nothing here tells an unknown user from a locked account. */
export const SIGN_IN_FAILED = en['signIn.failed']

export interface FormTarget {
  csrf: string
}

/** The password form; its password may stay empty where an email domain forwards to a provider (home-realm discovery). */
function passwordForm(v: SignInView, form: FormTarget, m: Messages) {
  const prefilled = v.username !== ''
  return html`<form method="post" action="${signInUrl(v.returnTo)}">
<input type="hidden" name="csrf" value="${form.csrf}">
<label for="username">${m.text('signIn.username')}</label>
<input id="username" name="username" type="text" value="${v.username}" autocomplete="${v.passkey ? 'username webauthn' : 'username'}" autocapitalize="none" spellcheck="false" required${prefilled ? '' : html` autofocus`}>
<label for="password">${m.text('signIn.password')}</label>
${v.discovery ? html`<p class="hint" id="password-hint">${m.text('signIn.passwordHint')}</p>` : ''}
<input id="password" name="password" type="password" autocomplete="current-password"${v.discovery ? html` aria-describedby="password-hint"` : html` required`}${prefilled ? html` autofocus` : ''}>
<div class="actions"><button class="button primary" type="submit">${m.text('signIn.submit')}</button></div>
</form>`
}

/** Beside the password form: a sign-in with a passkey, also offered in the username field's autofill. */
function passkeyChoice(v: SignInView, form: FormTarget, m: Messages) {
  if (!v.localLogin || !v.passkey) return ''
  return html`<p class="or">${m.text('signIn.or')}</p>
${passkeyForm(m, { offer: v.passkey, csrf: form.csrf, returnTo: v.returnTo, autofill: true, primary: false })}`
}

/** One link per provider: a link, not a form, so the page's CSP form-action never has to name the upstream. */
function providerButtons(v: SignInView, m: Messages) {
  if (v.providers.length === 0) return ''
  const links = v.providers.map(
    (p) => html`<a class="button secondary" href="${p.href}">${m.text('signIn.withProvider', { provider: p.displayName })}</a>`,
  )
  return html`${v.localLogin ? html`<p class="or">${m.text('signIn.or')}</p>` : ''}<div class="providers">${links}</div>`
}

export function renderSignIn(v: SignInView, form: FormTarget): LocalizedPage {
  const none = !v.localLogin && v.providers.length === 0
  return (m) => ({
    status: v.failed ? 401 : none ? 403 : 200,
    title: m.text('signIn.title'),
    body: html`<h1>${m.text('signIn.title')}</h1>
${v.client ? html`<p class="lead">${m.html('signIn.toClient', { client: html`<strong id="client-name">${v.client.clientName}</strong>` })}</p>` : html`<p class="lead">${m.text('signIn.toAccount')}</p>`}
${v.signedInAs ? html`<div class="notice"><p>${m.html('signIn.replaces', { user: html`<strong>${v.signedInAs}</strong>` })}</p></div>` : ''}
${alertBox(v.failed ? m.text('signIn.failed') : none ? m.text('signIn.noWay') : undefined)}
${v.localLogin ? passwordForm(v, form, m) : ''}
${passkeyChoice(v, form, m)}
${providerButtons(v, m)}`,
    scripts: v.localLogin && v.passkey ? ['passkeys'] : [],
  })
}

/** Home-realm discovery: the one page between the typed address and the provider, naming it. */
export function renderForward(p: { displayName: string; href: string }): LocalizedPage {
  return (m) => ({
    status: 200,
    title: m.text('signIn.forward.title', { provider: p.displayName }),
    body: html`<h1>${m.text('signIn.forward.title', { provider: p.displayName })}</h1>
<p>${m.html('signIn.forward.text', { provider: html`<strong>${p.displayName}</strong>` })}</p>
<div class="actions"><a class="button primary" href="${p.href}" autofocus>${m.text('signIn.forward.title', { provider: p.displayName })}</a></div>`,
  })
}

/** GET /account/sign-out: the question, whose form posts to the same URL. */
export function renderSignOut(v: { username: string } | undefined, form: FormTarget): LocalizedPage {
  if (!v) return renderSignedOut()
  return (m) => ({
    status: 200,
    title: m.text('signOut.title'),
    body: html`<h1>${m.text('signOut.heading')}</h1>
<p class="who">${m.html('signOut.who', { user: html`<strong>${v.username}</strong>` })}</p>
<p>${m.text('signOut.text')}</p>
<form method="post" action="${SIGN_OUT_PATH}">
<input type="hidden" name="csrf" value="${form.csrf}">
<div class="actions"><button class="button primary" type="submit">${m.text('signOut.submit')}</button></div>
</form>`,
  })
}

export function renderSignedOut(): LocalizedPage {
  return (m) => ({
    status: 200,
    title: m.text('signedOut.title'),
    body: html`<h1>${m.text('signedOut.heading')}</h1>
<div class="success" role="status"><p>${m.text('signedOut.text')}</p></div>
<div class="actions"><a class="button secondary" href="${SIGN_IN_PATH}">${m.text('signedOut.again')}</a></div>`,
  })
}
