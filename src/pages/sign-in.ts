// The one sign-in page (src/interaction/sign-in.ts has its logic), and the sign-out pages. Accessible: one h1, a label on every field, the failure announced with
// role=alert, autocomplete hints so password managers fill the right fields.
import type { SignInView } from '../interaction/sign-in.js'
import { alertBox, html, type Page } from './html.js'
import { SIGN_IN_PATH, SIGN_OUT_PATH } from '../endpoints.js'

/** The sign-in page's URL, returning to `returnTo` afterwards. */
export function signInUrl(returnTo?: string): string {
  return returnTo ? `${SIGN_IN_PATH}?return_to=${encodeURIComponent(returnTo)}` : SIGN_IN_PATH
}

/** The same words for every failure: nothing here tells an unknown user from a locked account. */
export const SIGN_IN_FAILED = 'The username or password is incorrect, or this account cannot sign in right now. Check both and try again.'

export interface FormTarget {
  csrf: string
}

/** The password form; its password may stay empty where an email domain forwards to a provider (home-realm discovery). */
function passwordForm(v: SignInView, form: FormTarget) {
  const prefilled = v.username !== ''
  return html`<form method="post" action="${signInUrl(v.returnTo)}">
<input type="hidden" name="csrf" value="${form.csrf}">
<label for="username">Username</label>
<input id="username" name="username" type="text" value="${v.username}" autocomplete="username" autocapitalize="none" spellcheck="false" required${prefilled ? '' : html` autofocus`}>
<label for="password">Password</label>
${v.discovery ? html`<p class="hint" id="password-hint">Signing in with your organisation's email address? Leave the password empty.</p>` : ''}
<input id="password" name="password" type="password" autocomplete="current-password"${v.discovery ? html` aria-describedby="password-hint"` : html` required`}${prefilled ? html` autofocus` : ''}>
<div class="actions"><button class="button primary" type="submit">Sign in</button></div>
</form>`
}

/** One link per provider: a link, not a form, so the page's CSP form-action never has to name the upstream. */
function providerButtons(v: SignInView) {
  if (v.providers.length === 0) return ''
  const links = v.providers.map((p) => html`<a class="button secondary" href="${p.href}">Sign in with ${p.displayName}</a>`)
  return html`${v.localLogin ? html`<p class="or">or</p>` : ''}<div class="providers">${links}</div>`
}

export function renderSignIn(v: SignInView, form: FormTarget): Page {
  const none = !v.localLogin && v.providers.length === 0
  return {
    status: v.failed ? 401 : none ? 403 : 200,
    title: 'Sign in',
    body: html`<h1>Sign in</h1>
${v.client ? html`<p class="lead">to continue to <strong id="client-name">${v.client.clientName}</strong></p>` : html`<p class="lead">to your account</p>`}
${v.signedInAs ? html`<div class="notice"><p>You are signed in as <strong>${v.signedInAs}</strong>. Signing in here replaces that session.</p></div>` : ''}
${alertBox(v.failed ? SIGN_IN_FAILED : none ? 'There is no way to sign in to this application here. Ask its administrator.' : undefined)}
${v.localLogin ? passwordForm(v, form) : ''}
${providerButtons(v)}`,
  }
}

/** Home-realm discovery: the one page between the typed address and the provider, naming it. */
export function renderForward(p: { displayName: string; href: string }): Page {
  return {
    status: 200,
    title: `Continue with ${p.displayName}`,
    body: html`<h1>Continue with ${p.displayName}</h1>
<p>Your email address signs in with <strong>${p.displayName}</strong>. You will be sent there to sign in, then brought back here.</p>
<div class="actions"><a class="button primary" href="${p.href}" autofocus>Continue with ${p.displayName}</a></div>`,
  }
}

/** GET /account/sign-out: the question, whose form posts to the same URL. */
export function renderSignOut(v: { username: string } | undefined, form: FormTarget): Page {
  if (!v) return renderSignedOut()
  return {
    status: 200,
    title: 'Sign out',
    body: html`<h1>Sign out?</h1>
<p class="who">You are signed in as <strong>${v.username}</strong>.</p>
<p>Applications will ask for your password again the next time they send you here.</p>
<form method="post" action="${SIGN_OUT_PATH}">
<input type="hidden" name="csrf" value="${form.csrf}">
<div class="actions"><button class="button primary" type="submit">Sign out</button></div>
</form>`,
  }
}

export function renderSignedOut(): Page {
  return {
    status: 200,
    title: 'Signed out',
    body: html`<h1>You are signed out</h1>
<div class="success" role="status"><p>Your session on this site has ended.</p></div>
<div class="actions"><a class="button secondary" href="${SIGN_IN_PATH}">Sign in again</a></div>`,
  }
}
