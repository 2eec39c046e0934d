// The pages of the second step and of setting up one-time codes, built like the sign-in page
// (src/pages/sign-in.ts): one h1, a label on every field, hints tied to their field, a refusal
// announced with role=alert, its field marked invalid and pointing at it (aria-describedby),
// autocomplete hints (one-time-code) so phones offer the code. The second step offers the
// person's passkey first (its button names what it does) and their codes as the other choice.
// The QR code is an inline SVG (the page's CSP allows no image source); the key beside it is a
// term and its definition, so a screen reader names it.
import { ACCOUNT_PATH, ACCOUNT_TWO_STEP_PATH, SECOND_FACTOR_PATH } from '../../endpoints.js'
import { alertBox, html, SafeHtml } from '../../pages/html.js'
import type { LocalizedPage } from '../../pages/layout.js'
import type { Messages } from '../../pages/messages/index.js'
import type { PasskeyOffer } from '../../interaction/sign-in.js'
import { stepUpUrl } from '../../interaction/authentication-level.js'
import type { CodeView, EnrolView } from './service.js'

const withReturn = (path: string, returnTo: string | undefined) => (returnTo ? `${path}?return_to=${encodeURIComponent(returnTo)}` : path)

const hidden = (name: string, value: string) => html`<input type="hidden" name="${name}" value="${value}">`

/** The id of the message that says a field's answer was refused (the field's aria-describedby names it). */
const errorId = (field: string) => `${field}-error`

/** The one-time code field (the enrolment page has it too); `invalid`: its answer was refused, said in #code-error. */
function codeField(m: Messages, invalid: boolean, autofocus: boolean): SafeHtml {
  return html`<label for="code">${m.text('twoStep.code.label')}</label>
<p class="hint" id="code-hint">${m.text('twoStep.code.hint')}</p>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" maxlength="12" required aria-describedby="code-hint${invalid ? ` ${errorId('code')}` : ''}"${invalid ? html` aria-invalid="true"` : ''}${autofocus ? html` autofocus` : ''}>`
}

/** What the page says about a refused answer, and the id of the field it is about (none for a passkey: its button stays). */
function refusal(m: Messages, v: CodeView): { text: string; field: string | undefined } | undefined {
  switch (v.failed) {
    case undefined:
      return undefined
    case 'otp':
      return { text: m.text('twoStep.code.failed'), field: 'code' }
    case 'recovery_code':
      return { text: m.text('twoStep.recovery.failed'), field: 'recovery-code' }
    case 'passkey_other_account':
      return { text: m.text('twoStep.passkey.otherAccount', { user: v.username }), field: undefined }
    case 'passkey_expired':
      return { text: m.text('twoStep.passkey.expired'), field: undefined }
    case 'passkey_no_script':
      return { text: m.text('twoStep.passkey.noScript'), field: undefined }
    case 'passkey':
      return { text: m.text('twoStep.passkey.failed'), field: undefined }
  }
}

/** The passkey step: a plain form whose script (src/pages/scripts.ts) runs the ceremony and posts its answer. */
function passkeyStep(m: Messages, v: CodeView & { passkey: PasskeyOffer }, action: string, csrf: string, autofocus: boolean): SafeHtml {
  return html`<form method="post" action="${action}" class="passkey" data-passkey="sign-in" data-options="${v.passkey.options}">
${hidden('csrf', csrf)}${hidden('kind', 'passkey')}
<input type="hidden" name="webauthn_response" value="">
<div class="alert" role="alert" data-passkey-error data-text="${m.text('twoStep.passkey.failed')}" hidden><p></p></div>
<div class="actions"><button class="button primary" type="submit" id="passkey-step"${autofocus ? html` autofocus` : ''}>${m.text('twoStep.passkey.submit')}</button></div>
</form>
<noscript><p class="hint">${m.text('twoStep.passkey.noScript')}</p></noscript>`
}

/** The one-time code form: on its own, or (after a passkey) the other choice, open when its code was refused. */
function otpForm(m: Messages, v: CodeView, action: string, csrf: string, alternative: boolean): SafeHtml {
  const invalid = v.failed === 'otp'
  const form = html`<form method="post" action="${action}">
${hidden('csrf', csrf)}${hidden('kind', 'otp')}
${codeField(m, invalid, alternative ? invalid : v.failed !== 'recovery_code')}
<div class="actions"><button class="button ${alternative ? 'secondary' : 'primary'}" type="submit">${m.text('twoStep.code.submit')}</button></div>
</form>`
  return alternative
    ? html`<details class="alternative" id="use-code"${invalid ? html` open` : ''}>
<summary>${m.text('twoStep.code.use')}</summary>
${form}
</details>`
    : form
}

function recoveryForm(m: Messages, v: CodeView, action: string, csrf: string): SafeHtml {
  const invalid = v.failed === 'recovery_code'
  return html`<details class="alternative"${invalid ? html` open` : ''}>
<summary>${m.text('twoStep.recovery.use')}</summary>
<form method="post" action="${action}">
${hidden('csrf', csrf)}${hidden('kind', 'recovery_code')}
<label for="recovery-code">${m.text('twoStep.recovery.label')}</label>
<p class="hint" id="recovery-code-hint">${m.text('twoStep.recovery.hint')}</p>
<input id="recovery-code" name="code" type="text" autocomplete="off" autocapitalize="none" spellcheck="false" maxlength="64" required aria-describedby="recovery-code-hint${invalid ? ` ${errorId('recovery-code')}` : ''}"${invalid ? html` aria-invalid="true" autofocus` : ''}>
<div class="actions"><button class="button secondary" type="submit">${m.text('twoStep.code.submit')}</button></div>
</form>
</details>`
}

export function renderCodePage(v: CodeView, form: { csrf: string }): LocalizedPage {
  const action = v.passkeyOnly
    ? stepUpUrl('passkey-step', v.returnTo) // the same page, only a passkey asked for
    : withReturn(SECOND_FACTOR_PATH, v.returnTo)
  const codeRefused = v.failed === 'otp' || v.failed === 'recovery_code'
  return (m) => {
    const refused = refusal(m, v)
    const user = html`<strong id="username">${v.username}</strong>`
    return {
      status: v.failed === 'passkey_no_script' ? 400 : v.failed ? 401 : 200,
      title: m.text('twoStep.code.title'),
      body: html`<h1>${m.text('twoStep.code.title')}</h1>
<p class="lead">${v.passkey ? m.html('twoStep.passkey.lead', { user }) : m.html('twoStep.code.lead', { user })}</p>
${alertBox(refused?.text, refused?.field ? errorId(refused.field) : 'second-factor-error')}
${v.passkey ? passkeyStep(m, { ...v, passkey: v.passkey }, action, form.csrf, !codeRefused) : ''}
${v.otp ? otpForm(m, v, action, form.csrf, v.passkey !== undefined) : ''}
${v.otp ? recoveryForm(m, v, action, form.csrf) : ''}`,
      scripts: v.passkey ? ['passkeys'] : [],
    }
  }
}

/** The secret in groups of four, as people copy it by hand (apps ignore the spaces); a line breaks only between groups. */
const grouped = (secret: string) => secret.match(/.{1,4}/g)!.join(' ')

export function renderEnrolPage(v: EnrolView, form: { csrf: string }): LocalizedPage {
  return (m) => ({
    status: v.failed ? 400 : 200,
    title: m.text('twoStep.enrol.title'),
    body: html`<h1>${m.text('twoStep.enrol.title')}</h1>
<p class="who">${m.html('account.signedInAs', { user: html`<strong id="username">${v.username}</strong>` })}</p>
${v.required ? html`<div class="notice"><p>${m.text('twoStep.enrol.required')}</p></div>` : ''}
${v.replaces ? html`<div class="notice"><p>${m.text('twoStep.enrol.replaces')}</p></div>` : ''}
${alertBox(v.failed ? m.text('twoStep.enrol.failed') : undefined, errorId('code'))}
<p>${m.text('twoStep.enrol.scan')}</p>
<div class="qr" role="img" aria-label="${m.text('twoStep.enrol.qr')}">${new SafeHtml(v.enrolment.qrSvg)}</div>
<dl class="secret-key">
<dt id="totp-secret-label">${m.text('twoStep.enrol.key')}</dt>
<dd><code class="secret" id="totp-secret">${grouped(v.enrolment.secret)}</code></dd>
</dl>
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
