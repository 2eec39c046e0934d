// The pages of the second step and of setting up one-time codes, built like the sign-in page
// (src/pages/sign-in.ts): one h1, a label on every field, hints tied to their field, a refusal
// announced with role=alert and its field marked invalid, autocomplete hints (one-time-code) so
// phones offer the code. The QR code is an inline SVG (the page's CSP allows no image source).
import { ACCOUNT_PATH, ACCOUNT_TWO_STEP_PATH, SECOND_FACTOR_PATH } from '../../endpoints.js'
import { alertBox, html, SafeHtml } from '../../pages/html.js'
import type { LocalizedPage } from '../../pages/layout.js'
import type { Messages } from '../../pages/messages/index.js'
import type { CodeView, EnrolView } from './service.js'

const withReturn = (path: string, returnTo: string | undefined) => (returnTo ? `${path}?return_to=${encodeURIComponent(returnTo)}` : path)

const hidden = (name: string, value: string) => html`<input type="hidden" name="${name}" value="${value}">`

/** The one-time code field (the enrolment page has it too). */
function codeField(m: Messages, invalid: boolean, autofocus: boolean): SafeHtml {
  return html`<label for="code">${m.text('twoStep.code.label')}</label>
<p class="hint" id="code-hint">${m.text('twoStep.code.hint')}</p>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" maxlength="12" required aria-describedby="code-hint"${invalid ? html` aria-invalid="true"` : ''}${autofocus ? html` autofocus` : ''}>`
}

export function renderCodePage(v: CodeView, form: { csrf: string }): LocalizedPage {
  const action = withReturn(SECOND_FACTOR_PATH, v.returnTo)
  const recoveryFailed = v.failed === 'recovery_code'
  return (m) => ({
    status: v.failed ? 401 : 200,
    title: m.text('twoStep.code.title'),
    body: html`<h1>${m.text('twoStep.code.title')}</h1>
<p class="lead">${m.html('twoStep.code.lead', { user: html`<strong id="username">${v.username}</strong>` })}</p>
${alertBox(v.failed === 'otp' ? m.text('twoStep.code.failed') : recoveryFailed ? m.text('twoStep.recovery.failed') : undefined)}
<form method="post" action="${action}">
${hidden('csrf', form.csrf)}${hidden('kind', 'otp')}
${codeField(m, v.failed === 'otp', !recoveryFailed)}
<div class="actions"><button class="button primary" type="submit">${m.text('twoStep.code.submit')}</button></div>
</form>
<details class="alternative"${recoveryFailed ? html` open` : ''}>
<summary>${m.text('twoStep.recovery.use')}</summary>
<form method="post" action="${action}">
${hidden('csrf', form.csrf)}${hidden('kind', 'recovery_code')}
<label for="recovery-code">${m.text('twoStep.recovery.label')}</label>
<p class="hint" id="recovery-code-hint">${m.text('twoStep.recovery.hint')}</p>
<input id="recovery-code" name="code" type="text" autocomplete="off" autocapitalize="none" spellcheck="false" maxlength="64" required aria-describedby="recovery-code-hint"${recoveryFailed ? html` aria-invalid="true" autofocus` : ''}>
<div class="actions"><button class="button secondary" type="submit">${m.text('twoStep.code.submit')}</button></div>
</form>
</details>`,
  })
}

/** The secret in groups of four, as people copy it by hand (apps ignore the spaces). */
const grouped = (secret: string) => secret.match(/.{1,4}/g)!.join(' ')

export function renderEnrolPage(v: EnrolView, form: { csrf: string }): LocalizedPage {
  return (m) => ({
    status: v.failed ? 400 : 200,
    title: m.text('twoStep.enrol.title'),
    body: html`<h1>${m.text('twoStep.enrol.title')}</h1>
<p class="who">${m.html('account.signedInAs', { user: html`<strong id="username">${v.username}</strong>` })}</p>
${v.required ? html`<div class="notice"><p>${m.text('twoStep.enrol.required')}</p></div>` : ''}
${v.replaces ? html`<div class="notice"><p>${m.text('twoStep.enrol.replaces')}</p></div>` : ''}
${alertBox(v.failed ? m.text('twoStep.enrol.failed') : undefined)}
<p>${m.text('twoStep.enrol.scan')}</p>
<div class="qr" role="img" aria-label="${m.text('twoStep.enrol.qr')}">${new SafeHtml(v.enrolment.qrSvg)}</div>
<p class="hint">${m.text('twoStep.enrol.key')}</p>
<code class="secret" id="totp-secret">${grouped(v.enrolment.secret)}</code>
<p><a id="otpauth-link" href="${v.enrolment.uri}">${m.text('twoStep.enrol.link')}</a></p>
<form method="post" action="${withReturn(ACCOUNT_TWO_STEP_PATH, v.returnTo)}">
${hidden('csrf', form.csrf)}${hidden('action', 'confirm')}
<p>${m.text('twoStep.enrol.confirm')}</p>
${codeField(m, v.failed, true)}
<div class="actions">
<button class="button primary" type="submit">${m.text('twoStep.enrol.submit')}</button>
${v.required ? '' : html`<a class="button secondary" href="${ACCOUNT_PATH}">${m.text('account.password.cancel')}</a>`}
</div>
</form>`,
  })
}

export function renderRecoveryCodes(v: { codes: string[]; enrolled: boolean; next: string }): LocalizedPage {
  return (m) => ({
    status: 200,
    title: m.text('twoStep.codes.title'),
    body: html`<h1>${m.text('twoStep.codes.title')}</h1>
<div class="success" role="status"><p>${v.enrolled ? m.text('twoStep.codes.on') : m.text('twoStep.codes.replaced')}</p></div>
<p>${m.text('twoStep.codes.text')}</p>
<ol class="recovery-codes" id="recovery-codes">${v.codes.map((c) => html`<li><code>${c}</code></li>`)}</ol>
<div class="actions"><a class="button primary" href="${v.next}" autofocus>${m.text('common.continue')}</a></div>`,
  })
}

export function renderRemoved(sessionsEnded: number): LocalizedPage {
  return (m) => ({
    status: 200,
    title: m.text('twoStep.removed.title'),
    body: html`<h1>${m.text('twoStep.removed.title')}</h1>
<div class="success" role="status"><p>${m.text('twoStep.removed.text')}</p>${
      sessionsEnded > 0
        ? html`<p>${m.text(sessionsEnded === 1 ? 'account.sessions.othersEnded.one' : 'account.sessions.othersEnded.other', { count: sessionsEnded })}</p>`
        : ''
    }</div>
<div class="actions"><a class="button primary" href="${ACCOUNT_PATH}">${m.text('twoStep.back')}</a></div>`,
  })
}
