// RP-initiated logout's pages: the question when the request does not prove which client sent it,
// and the signed-out page (the account's own, src/pages/sign-in.ts) when no client is to be returned to.
import { html, type Page } from '../../pages/html.js'

/** username: who is signed in, when the request showed it (a cross-site POST carries no session cookie). */
export function renderLogoutConfirm(
  v: { clientName: string | undefined; username: string | undefined },
  form: { action: string; csrf: string },
): Page {
  return {
    status: 200,
    title: 'Sign out',
    body: html`<h1>Sign out?</h1>
${v.clientName ? html`<p class="lead"><strong id="client-name">${v.clientName}</strong> asks to sign you out.</p>` : html`<p class="lead">An application asks to sign you out.</p>`}
${
  v.username !== undefined
    ? html`<p class="who">You are signed in as <strong>${v.username}</strong>.</p>
`
    : ''
}<p>Signing out ends your session here: applications will ask for your password again the next time they send you to this site.</p>
<form method="post" action="${form.action}">
<input type="hidden" name="csrf" value="${form.csrf}">
<div class="actions">
<button class="button primary" type="submit" name="decision" value="sign-out">Sign out</button>
<a class="button secondary" href="/account">Stay signed in</a>
</div>
</form>`,
  }
}
