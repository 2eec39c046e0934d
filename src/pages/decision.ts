// The decision screen, one component for every flow in which a person decides (CIBA approval,
// and next the authorization endpoint's consent and the device page): the application, what it
// will be able to do (each scope by its display name and description), the binding message to
// compare, who is signed in (with a way to switch), and Approve as the primary action, Deny as
// the secondary one. The buttons post `decision=approve|deny` (and `remember=yes` when offered).
import type { DecisionView } from '../interaction/decision.js'
import { alertBox, html, type SafeHtml } from './html.js'

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

export function renderDecision(v: DecisionView, form: DecisionForm): SafeHtml {
  return html`<h1>${form.heading ?? `${v.clientName} asks for your approval`}</h1>
<p class="who">Signed in as <strong id="signed-in-as">${v.username}</strong> · <a href="${form.switchAccountHref}">Not you?</a></p>
${alertBox(form.error)}
${
  v.bindingMessage
    ? html`<h2>Check this code</h2>
<p>It must match the code shown where the request was made. If it does not, deny.</p>
<p class="code" id="binding-message">${v.bindingMessage}</p>`
    : ''
}
<h2>${v.clientName} will be able to</h2>
<ul class="scopes" id="scopes">
${v.scopes.map(
  (s) => html`<li data-scope="${s.name}"><strong>${s.displayName}</strong>${s.description ? html`<span>${s.description}</span>` : ''}</li>
`,
)}</ul>
${v.details.length > 0 ? html`<dl class="details">${v.details.map((d) => html`<dt>${d.label}</dt><dd>${d.value}</dd>`)}</dl>` : ''}
<form method="post" action="${form.action}">
<input type="hidden" name="csrf" value="${form.csrf}">
${v.offerRemember ? html`<label class="check"><input type="checkbox" name="remember" value="yes"> Remember this decision for ${v.clientName}</label>` : ''}
<div class="actions">
<button class="button primary" type="submit" name="decision" value="approve">${v.approveLabel}</button>
<button class="button secondary" type="submit" name="decision" value="deny">Deny</button>
</div>
</form>`
}
