// RP-initiated logout's pages: the question when the request does not prove which client sent it,
// and the signed-out page (the account's own, src/pages/sign-in.ts) when no client is to be returned to.
import { html } from '../../pages/html.js'
import type { LocalizedPage } from '../../pages/layout.js'

/** username: who is signed in, when the request showed it (a cross-site POST carries no session cookie). */
export function renderLogoutConfirm(
  v: { clientName: string | undefined; username: string | undefined },
  form: { action: string; csrf: string },
): LocalizedPage {
  return (m) => ({
    status: 200,
    title: m.text('signOut.title'),
    body: html`<h1>${m.text('signOut.heading')}</h1>
${v.clientName ? html`<p class="lead">${m.html('logout.asks', { client: html`<strong id="client-name">${v.clientName}</strong>` })}</p>` : html`<p class="lead">${m.text('logout.anApplication')}</p>`}
${
  v.username !== undefined
    ? html`<p class="who">${m.html('signOut.who', { user: html`<strong>${v.username}</strong>` })}</p>
`
    : ''
}<p>${m.text('logout.text')}</p>
<form method="post" action="${form.action}">
<input type="hidden" name="csrf" value="${form.csrf}">
<div class="actions">
<button class="button primary" type="submit" name="decision" value="sign-out">${m.text('signOut.submit')}</button>
<a class="button secondary" href="/account">${m.text('logout.stay')}</a>
</div>
</form>`,
  })
}
