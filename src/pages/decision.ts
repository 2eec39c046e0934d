// The decision screen, one component for every flow in which a person decides (CIBA approval,
// the authorization endpoint's consent and the device page): the application, what it will be
// able to do (each scope by its label and, when it adds something, its description), the binding
// message to compare, who is signed in (with a way to switch), and Approve as the primary action,
// Deny as the secondary one. The buttons post `decision=approve|deny` (and `remember=yes` when
// offered).
import type { DecisionView, UnverifiedClient } from '../interaction/decision.js'
import { alertBox, html, type SafeHtml } from './html.js'
import type { Messages } from './messages/index.js'
import { scopeLine } from './scopes.js'

export interface DecisionForm {
  /** Where the form posts (the page's own URL, so a refused form can link back to it). */
  action: string
  csrf: string
  /** The sign-in page returning here, for "Not you?". */
  switchAccountHref: string
  /** Defaults to "<application> asks for your approval". */
  heading?: string
  /** An error to show above the form. */
  error?: string | undefined
}

/** A self-registered client, named as such: the host first and large, then what it means. */
function unverifiedNote(u: UnverifiedClient, client: string, m: Messages): SafeHtml {
  const host = html`<strong>${u.host}</strong>`
  return html`<div class="notice unverified" id="unverified" role="note">
<p class="label">${m.text('decision.unverified.label')}</p>
<p class="host" id="client-host">${u.host}</p>
<p>${m.html(u.kind === 'metadata-document' ? 'decision.unverified.metadataDocument' : 'decision.unverified.registration', { client, host })}</p>
</div>`
}

const DETAIL = { 'identity-provider': 'decision.detail.identityProvider', tenant: 'decision.detail.tenant' } as const

export function renderDecision(v: DecisionView, form: DecisionForm, m: Messages): SafeHtml {
  const client = v.clientName
  return html`<h1>${form.heading ?? m.text('decision.heading', { client })}</h1>
<p class="who">${m.html('decision.signedInAs', { user: html`<strong id="signed-in-as">${v.username}</strong>` })} · <a href="${form.switchAccountHref}">${m.text('decision.notYou')}</a></p>
${alertBox(form.error)}
${v.unverified ? unverifiedNote(v.unverified, client, m) : ''}
${
  v.bindingMessage
    ? html`<h2>${m.text('decision.checkCode')}</h2>
<p>${m.text('decision.checkCodeHint')}</p>
<p class="code" id="binding-message">${v.bindingMessage}</p>`
    : ''
}
<h2>${m.text('decision.scopes', { client })}</h2>
<ul class="scopes" id="scopes">
${v.scopes.map((s) => {
  const line = scopeLine(s, m)
  return html`<li data-scope="${s.name}"><strong>${line.label}</strong>${line.about ? html`<span>${line.about}</span>` : ''}</li>
`
})}</ul>
${v.details.length > 0 ? html`<dl class="details">${v.details.map((d) => html`<dt>${m.text(DETAIL[d.label])}</dt><dd>${d.value}</dd>`)}</dl>` : ''}
<form method="post" action="${form.action}">
<input type="hidden" name="csrf" value="${form.csrf}">
${v.offerRemember ? html`<label class="check"><input type="checkbox" name="remember" value="yes"> ${m.text('decision.remember', { client })}</label>` : ''}
<div class="actions">
<button class="button primary" type="submit" name="decision" value="approve">${m.text(v.approveAction === 'allow' ? 'decision.allow' : 'decision.approve')}</button>
<button class="button secondary" type="submit" name="decision" value="deny">${m.text('decision.deny')}</button>
</div>
</form>`
}
