// The account page (GET /account) and the password page (GET /account/password): a person's own
// control panel. Every form posts to the URL of the page that shows it, with its CSRF token; the
// account page's forms say what they do in an `action` field. Accessible: one h1, a section with
// its own h2 per subject, each list item's button naming what it acts on for screen readers,
// results announced with role=status and refusals with role=alert.
//
// Every sentence a person reads comes from the message catalogues (src/pages/messages/), in the
// request's language; so do the dates.
import { ACCOUNT_PASSWORD_PATH, ACCOUNT_PATH, ACCOUNT_TWO_STEP_PATH, SIGN_OUT_PATH } from '../../endpoints.js'
import { alertBox, html, type SafeHtml } from '../../pages/html.js'
import type { LocalizedPage } from '../../pages/layout.js'
import type { Locale, Messages } from '../../pages/messages/index.js'
import { scopeLine } from '../../pages/scopes.js'
import type { Device } from './device.js'
import type { PasskeyAddFailure, PasskeyItemView, PasskeysView } from './passkeys.js'
import { MIN_PASSWORD_LENGTH, type AccountView, type AppView, type PasswordChangeFailure, type SessionView } from './service.js'

/** Why a new password was refused. */
function failureText(m: Messages, failure: PasswordChangeFailure): string {
  switch (failure) {
    case 'missing':
      return m.text('account.password.missing')
    case 'too_short':
      return m.text('account.password.too_short', { min: MIN_PASSWORD_LENGTH })
    case 'mismatch':
      return m.text('account.password.mismatch')
    case 'unchanged':
      return m.text('account.password.unchanged')
    case 'wrong_password':
      // The same words whatever the reason (wrong, or the account locked): as the sign-in page says it.
      return m.text('account.password.wrong_password')
  }
}

/** How many other sessions ended (a count of one is said in words). */
export function othersEnded(m: Messages, n: number): string {
  return n === 1 ? m.text('account.sessions.othersEnded.one') : m.text('account.sessions.othersEnded.other', { count: n })
}

/** The conventions dates are written in, per language (en-GB: day before month, 24-hour clock). */
const DATE_LOCALES: Record<Locale, string> = { en: 'en-GB', de: 'de-DE' }

/** Times as one reads them anywhere: day, month, year and time, in UTC (the server knows no time zone of the reader). */
const formats = (locale: Locale) => ({
  date: new Intl.DateTimeFormat(DATE_LOCALES[locale], { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }),
  day: new Intl.DateTimeFormat(DATE_LOCALES[locale], { dateStyle: 'medium', timeZone: 'UTC' }),
})
const FORMATS = Object.fromEntries(Object.keys(DATE_LOCALES).map((l) => [l, formats(l as Locale)])) as Record<
  Locale,
  ReturnType<typeof formats>
>

function when(m: Messages, ms: number, withTime = true): SafeHtml {
  const d = new Date(ms)
  const { date, day } = FORMATS[m.locale]
  return html`<time datetime="${d.toISOString()}">${withTime ? `${date.format(d)} UTC` : day.format(d)}</time>`
}

function deviceName(m: Messages, d: Device): string {
  if (d.browser && d.system) return m.text('account.session.device', { browser: d.browser, system: d.system })
  return d.browser ?? d.system ?? m.text('account.session.unknownBrowser')
}

/** A result above the sections: a success (role=status) or a refusal (role=alert), in the page's language. */
export interface Notice {
  tone: 'success' | 'alert'
  text: (m: Messages) => string
}

export interface AccountForm {
  csrf: string
  notice?: Notice | undefined
}

function hidden(name: string, value: string): SafeHtml {
  return html`<input type="hidden" name="${name}" value="${value}">`
}

function appItem(m: Messages, a: AppView, csrf: string): SafeHtml {
  const scopes = a.scopes.map((s) => scopeLine(s, m).label)
  const since = when(m, a.since, false)
  return html`<li class="item" data-client-id="${a.clientId}">
<div class="item-main">
<strong class="item-title">${a.clientName}</strong>
<span class="meta">${a.remembered ? m.html('account.app.allowed', { date: since }) : m.html('account.app.signedIn', { date: since })}</span>
<span class="item-text">${scopes.length > 0 ? scopes.join(' · ') : m.text('account.app.noScopes')}</span>
</div>
<form method="post" action="${ACCOUNT_PATH}">
${hidden('csrf', csrf)}${hidden('action', 'revoke-app')}${hidden('client_id', a.clientId)}
<button class="button danger small" type="submit" aria-label="${m.text('account.app.revokeFor', { app: a.clientName })}">${m.text('account.app.revoke')}</button>
</form>
</li>`
}

function sessionItem(m: Messages, s: SessionView, csrf: string): SafeHtml {
  const device = deviceName(m, s.device)
  const signedIn = when(m, s.signedInAt)
  return html`<li class="item${s.current ? ' current' : ''}" data-sid="${s.sid}">
<div class="item-main">
<strong class="item-title">${device}${s.current ? html` <span class="badge">${m.text('account.session.thisDevice')}</span>` : ''}</strong>
<span class="meta">${s.current ? m.text('account.session.activeNow') : m.html('account.session.lastActive', { date: when(m, s.lastUsedAt) })}</span>
<span class="item-text">${
    s.provider
      ? m.html('account.session.signedInThrough', { date: signedIn, provider: s.provider })
      : m.html('account.session.signedIn', { date: signedIn })
  }</span>
</div>
${
  s.current
    ? ''
    : html`<form method="post" action="${ACCOUNT_PATH}">
${hidden('csrf', csrf)}${hidden('action', 'end-session')}${hidden('sid', s.sid)}
<button class="button secondary small" type="submit" aria-label="${m.text('account.session.endFor', { device })}">${m.text('account.session.end')}</button>
</form>`
}
</li>`
}

/** Why a passkey was not added. */
export function passkeyFailureText(m: Messages, failure: PasskeyAddFailure): string {
  switch (failure) {
    case 'no_script':
      return m.text('account.passkeys.noScript')
    case 'bad_name':
      return m.text('account.passkeys.badName')
    case 'duplicate':
      return m.text('account.passkeys.duplicate')
    case 'failed':
      return m.text('account.passkeys.failed')
  }
}

function passkeyItem(m: Messages, p: PasskeyItemView, csrf: string): SafeHtml {
  return html`<li class="item" data-credential-id="${p.credentialId}">
<div class="item-main">
<strong class="item-title">${p.name}</strong>
<span class="meta">${m.html('account.passkey.created', { date: when(m, p.createdAt, false) })} · ${
    p.lastUsedAt === undefined ? m.text('account.passkey.neverUsed') : m.html('account.passkey.lastUsed', { date: when(m, p.lastUsedAt) })
  }</span>
<span class="item-text">${p.synced ? m.text('account.passkey.synced') : m.text('account.passkey.deviceBound')}</span>
</div>
<form method="post" action="${ACCOUNT_PATH}">
${hidden('csrf', csrf)}${hidden('action', 'remove-passkey')}${hidden('credential_id', p.credentialId)}
<button class="button danger small" type="submit" aria-label="${m.text('account.passkey.removeFor', { name: p.name })}">${m.text('account.passkey.remove')}</button>
</form>
</li>`
}

/** The "Passkeys" section: the person's passkeys, each with "Remove", and "Add a passkey" with an optional name. */
function passkeysSection(m: Messages, v: PasskeysView, csrf: string): SafeHtml {
  return html`<section class="panel" aria-labelledby="passkeys-heading" id="passkeys">
<h2 id="passkeys-heading">${m.text('account.passkeys.heading')}</h2>
<p class="hint">${m.text('account.passkeys.intro')}</p>
${
  v.items.length === 0
    ? html`<p class="empty">${m.text('account.passkeys.none')}</p>`
    : html`<ul class="items">
${v.items.map((p) => passkeyItem(m, p, csrf))}</ul>`
}
${
  v.options === undefined
    ? ''
    : html`<form method="post" action="${ACCOUNT_PATH}" class="below" data-passkey="register" data-options="${v.options}">
${hidden('csrf', csrf)}${hidden('action', 'add-passkey')}<input type="hidden" name="webauthn_response" value="">
<div class="alert" role="alert" data-passkey-error data-text="${m.text('account.passkeys.failed')}" hidden><p></p></div>
<label for="passkey_name">${m.text('account.passkeys.name')}</label>
<p class="hint" id="passkey-name-hint">${m.text('account.passkeys.nameHint')}</p>
<input id="passkey_name" name="passkey_name" type="text" maxlength="100" autocomplete="off" aria-describedby="passkey-name-hint">
<div class="actions"><button class="button primary small" type="submit" id="add-passkey">${m.text('account.passkeys.add')}</button></div>
</form>`
}
</section>`
}

function signedInAs(m: Messages, username: string): SafeHtml {
  return m.html('account.signedInAs', { user: html`<strong id="username">${username}</strong>` })
}

/**
 * The "Two-step verification" section: set up one-time codes, or, when they are on, new recovery
 * codes and removal (the forms post to the second-factor flow's page, src/flows/second-factor).
 */
export function twoStepSection(m: Messages, v: { on: boolean; recoveryCodesLeft: number }, csrf: string): SafeHtml {
  const post = (action: string, label: string, cls: string, aria?: string) => html`<form method="post" action="${ACCOUNT_TWO_STEP_PATH}">
${hidden('csrf', csrf)}${hidden('action', action)}
<button class="button ${cls} small" type="submit"${aria ? html` aria-label="${aria}"` : ''}>${label}</button>
</form>`
  return html`<section class="panel" aria-labelledby="two-step-heading" id="two-step">
<h2 id="two-step-heading">${m.text('twoStep.account.heading')}</h2>
${
  v.on
    ? html`<p class="hint">${m.text('twoStep.account.on', { count: v.recoveryCodesLeft })}</p>
<div class="row-actions">
${post('regenerate', m.text('twoStep.account.regenerate'), 'secondary')}
${post('remove', m.text('twoStep.account.remove'), 'danger', m.text('twoStep.account.removeFor'))}
</div>`
    : html`<p class="hint">${m.text('twoStep.account.off')}</p>
<div class="below"><a class="button secondary small" href="${ACCOUNT_TWO_STEP_PATH}">${m.text('twoStep.account.setUp')}</a></div>`
}
</section>`
}

export function renderAccount(v: AccountView, form: AccountForm, status = 200): LocalizedPage {
  return (m) => {
    const others = v.sessions.filter((s) => !s.current).length
    const notice = form.notice
    const noticeText = notice?.text(m)
    return {
      status,
      title: m.text('account.title'),
      body: html`<h1>${m.text('account.title')}</h1>
<p class="who">${signedInAs(m, v.username)}${v.name ? html` · ${v.name}` : ''}</p>
${notice?.tone === 'success' ? html`<div class="success" role="status"><p>${noticeText}</p></div>` : alertBox(noticeText)}
<section class="panel" aria-labelledby="apps-heading" id="apps">
<h2 id="apps-heading">${m.text('account.apps.heading')}</h2>
${
  v.apps.length === 0
    ? html`<p class="empty">${m.text('account.apps.none')}</p>`
    : html`<p class="hint">${m.text('account.apps.intro')}</p>
<ul class="items">
${v.apps.map((a) => appItem(m, a, form.csrf))}</ul>`
}
</section>
<section class="panel" aria-labelledby="sessions-heading" id="sessions">
<h2 id="sessions-heading">${m.text('account.sessions.heading')}</h2>
<p class="hint">${m.text('account.sessions.intro')}</p>
<ul class="items">
${v.sessions.map((s) => sessionItem(m, s, form.csrf))}</ul>
${
  others > 0
    ? html`<form method="post" action="${ACCOUNT_PATH}" class="below">
${hidden('csrf', form.csrf)}${hidden('action', 'end-other-sessions')}
<button class="button secondary small" type="submit">${m.text('account.sessions.endOthers')}</button>
</form>`
    : ''
}
</section>
${v.twoStep ? twoStepSection(m, v.twoStep, form.csrf) : ''}
${v.passkeys ? passkeysSection(m, v.passkeys, form.csrf) : ''}
<section class="panel" aria-labelledby="password-heading" id="password">
<h2 id="password-heading">${m.text('account.password.heading')}</h2>
${
  v.hasPassword
    ? html`<p class="hint">${m.text('account.password.intro')}</p>
<div class="below"><a class="button secondary small" href="${ACCOUNT_PASSWORD_PATH}">${m.text('account.password.change')}</a></div>`
    : html`<p class="hint">${m.text('account.password.none')}</p>`
}
</section>
<form method="post" action="${SIGN_OUT_PATH}">
${hidden('csrf', form.csrf)}
<div class="actions"><button class="button secondary" type="submit">${m.text('account.signOut')}</button></div>
</form>`,
      scripts: v.passkeys?.options === undefined ? [] : ['passkeys'],
    }
  }
}

export function renderPasswordForm(
  v: { username: string },
  form: { csrf: string; failure?: PasswordChangeFailure | undefined },
): LocalizedPage {
  return (m) => {
    const failure = form.failure
    return {
      status: failure === undefined ? 200 : failure === 'wrong_password' ? 401 : 400,
      title: m.text('account.password.title'),
      body: html`<h1>${m.text('account.password.title')}</h1>
<p class="who">${signedInAs(m, v.username)}</p>
${alertBox(failure && failureText(m, failure))}
<form method="post" action="${ACCOUNT_PASSWORD_PATH}">
${hidden('csrf', form.csrf)}
<input type="text" name="username" value="${v.username}" autocomplete="username" hidden>
<label for="current_password">${m.text('account.password.current')}</label>
<input id="current_password" name="current_password" type="password" autocomplete="current-password" required autofocus>
<label for="new_password">${m.text('account.password.new')}</label>
<p class="hint" id="new-password-hint">${m.text('account.password.newHint', { min: MIN_PASSWORD_LENGTH })}</p>
<input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" required aria-describedby="new-password-hint">
<label for="confirm_password">${m.text('account.password.confirm')}</label>
<input id="confirm_password" name="confirm_password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" required>
<div class="actions">
<button class="button primary" type="submit">${m.text('account.password.change')}</button>
<a class="button secondary" href="${ACCOUNT_PATH}">${m.text('account.password.cancel')}</a>
</div>
</form>`,
    }
  }
}

export function renderPasswordChanged(sessionsEnded: number): LocalizedPage {
  return (m) => ({
    status: 200,
    title: m.text('account.password.changed.title'),
    body: html`<h1>${m.text('account.password.changed.title')}</h1>
<div class="success" role="status"><p>${m.text('account.password.changed.text')}</p>${sessionsEnded > 0 ? html`<p>${othersEnded(m, sessionsEnded)}</p>` : ''}</div>
<div class="actions"><a class="button primary" href="${ACCOUNT_PATH}">${m.text('account.password.back')}</a></div>`,
  })
}
