// The account page (GET /account) and the password page (GET /account/password): a person's own
// control panel. Every form posts to the URL of the page that shows it, with its CSRF token; the
// account page's forms say what they do in an `action` field. Accessible: one h1, a section with
// its own h2 per subject, each list item's button naming what it acts on for screen readers,
// results announced with role=status and refusals with role=alert.
//
// Every sentence a person reads is in TEXT below, so that it can move into a message catalogue.
import { ACCOUNT_PASSWORD_PATH, ACCOUNT_PATH, SIGN_OUT_PATH } from '../../endpoints.js'
import { alertBox, html, type Page, type SafeHtml } from '../../pages/html.js'
import { messagesFor } from '../../pages/messages/index.js'
import { scopeLine } from '../../pages/scopes.js'
import type { Device } from './device.js'
import { MIN_PASSWORD_LENGTH, type AccountView, type AppView, type PasswordChangeFailure, type SessionView } from './service.js'

export const TEXT = {
  title: 'Your account',
  signedInAs: 'Signed in as',
  appsHeading: 'Apps with access to your account',
  appsIntro: 'These apps can use your account. Removing an app signs it out and it will have to ask you again.',
  appsNone: 'No app has access to your account.',
  appAllowed: 'Allowed',
  appSignedIn: 'Signed in since',
  appNoScopes: 'Signed in with your account',
  appRevoke: 'Remove access',
  appRevokeFor: (app: string) => `Remove access for ${app}`,
  appRevoked: (app: string) => `${app} no longer has access to your account. It has been signed out.`,
  appUnknown: 'That app has no access to your account.',
  sessionsHeading: 'Where you are signed in',
  sessionsIntro: 'Sign out of any session you do not recognise, then change your password.',
  thisDevice: 'This device',
  activeNow: 'Active now',
  lastActive: 'Last active',
  signedInAt: 'Signed in',
  through: (provider: string) => `through ${provider}`,
  unknownBrowser: 'Unknown browser',
  deviceOn: (browser: string, system: string) => `${browser} on ${system}`,
  sessionEnd: 'Sign out',
  sessionEndFor: (device: string) => `Sign out of ${device}`,
  sessionEnded: 'That session has been signed out.',
  sessionUnknown: 'That session has already ended.',
  endOthers: 'Sign out of all other sessions',
  othersEnded: (n: number) => (n === 1 ? 'One other session has been signed out.' : `${n} other sessions have been signed out.`),
  noOthers: 'You have no other sessions.',
  passwordHeading: 'Password',
  passwordIntro: 'Changing your password signs you out everywhere else.',
  passwordNone: 'You sign in through another provider: there is no password here to change.',
  passwordChange: 'Change password',
  signOut: 'Sign out',
  unknownAction: 'That did not work. Please try again.',
  // The password page.
  passwordTitle: 'Change your password',
  currentPassword: 'Current password',
  newPassword: 'New password',
  newPasswordHint: `At least ${MIN_PASSWORD_LENGTH} characters. A few unrelated words make a strong password that is easy to remember.`,
  confirmPassword: 'New password again',
  cancel: 'Cancel',
  passwordFailures: {
    missing: 'Enter your current password and a new one.',
    too_short: `The new password must have at least ${MIN_PASSWORD_LENGTH} characters.`,
    mismatch: 'The two new passwords are not the same.',
    unchanged: 'The new password is the same as the current one.',
    // The same words whatever the reason (wrong, or the account locked): as the sign-in page says it.
    wrong_password: 'The current password is incorrect, or your account cannot change it right now. Check it and try again.',
  } satisfies Record<PasswordChangeFailure, string>,
  passwordChangedTitle: 'Password changed',
  passwordChanged: 'Your password has been changed. Use it the next time you sign in.',
  backToAccount: 'Back to your account',
} as const

/** Times as one reads them anywhere: day, month, year and time, in UTC (the server knows no time zone of the reader). */
const DATE = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' })
const DAY = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone: 'UTC' })

function when(ms: number, withTime = true): SafeHtml {
  const d = new Date(ms)
  return html`<time datetime="${d.toISOString()}">${withTime ? `${DATE.format(d)} UTC` : DAY.format(d)}</time>`
}

function deviceName(d: Device): string {
  if (d.browser && d.system) return TEXT.deviceOn(d.browser, d.system)
  return d.browser ?? d.system ?? TEXT.unknownBrowser
}

/** A result above the sections: a success (role=status) or a refusal (role=alert). */
export type Notice = { tone: 'success'; text: string } | { tone: 'alert'; text: string }

export interface AccountForm {
  csrf: string
  notice?: Notice | undefined
}

const ENGLISH = messagesFor('en')

function hidden(name: string, value: string): SafeHtml {
  return html`<input type="hidden" name="${name}" value="${value}">`
}

function appItem(a: AppView, csrf: string): SafeHtml {
  // The page is English until its TEXT moves into the catalogues; the scopes' labels already are.
  const scopes = a.scopes.map((s) => scopeLine(s, ENGLISH).label)
  return html`<li class="item" data-client-id="${a.clientId}">
<div class="item-main">
<strong class="item-title">${a.clientName}</strong>
<span class="meta">${a.remembered ? TEXT.appAllowed : TEXT.appSignedIn} ${when(a.since, false)}</span>
<span class="item-text">${scopes.length > 0 ? scopes.join(' · ') : TEXT.appNoScopes}</span>
</div>
<form method="post" action="${ACCOUNT_PATH}">
${hidden('csrf', csrf)}${hidden('action', 'revoke-app')}${hidden('client_id', a.clientId)}
<button class="button danger small" type="submit" aria-label="${TEXT.appRevokeFor(a.clientName)}">${TEXT.appRevoke}</button>
</form>
</li>`
}

function sessionItem(s: SessionView, csrf: string): SafeHtml {
  const device = deviceName(s.device)
  const how = s.provider ? html` ${TEXT.through(s.provider)}` : ''
  return html`<li class="item${s.current ? ' current' : ''}" data-sid="${s.sid}">
<div class="item-main">
<strong class="item-title">${device}${s.current ? html` <span class="badge">${TEXT.thisDevice}</span>` : ''}</strong>
<span class="meta">${s.current ? TEXT.activeNow : html`${TEXT.lastActive} ${when(s.lastUsedAt)}`}</span>
<span class="item-text">${TEXT.signedInAt} ${when(s.signedInAt)}${how}</span>
</div>
${
  s.current
    ? ''
    : html`<form method="post" action="${ACCOUNT_PATH}">
${hidden('csrf', csrf)}${hidden('action', 'end-session')}${hidden('sid', s.sid)}
<button class="button secondary small" type="submit" aria-label="${TEXT.sessionEndFor(device)}">${TEXT.sessionEnd}</button>
</form>`
}
</li>`
}

export function renderAccount(v: AccountView, form: AccountForm, status = 200): Page {
  const others = v.sessions.filter((s) => !s.current).length
  const notice = form.notice
  return {
    status,
    title: TEXT.title,
    body: html`<h1>${TEXT.title}</h1>
<p class="who">${TEXT.signedInAs} <strong id="username">${v.username}</strong>${v.name ? html` · ${v.name}` : ''}</p>
${notice?.tone === 'success' ? html`<div class="success" role="status"><p>${notice.text}</p></div>` : alertBox(notice?.text)}
<section class="panel" aria-labelledby="apps-heading" id="apps">
<h2 id="apps-heading">${TEXT.appsHeading}</h2>
${
  v.apps.length === 0
    ? html`<p class="empty">${TEXT.appsNone}</p>`
    : html`<p class="hint">${TEXT.appsIntro}</p>
<ul class="items">
${v.apps.map((a) => appItem(a, form.csrf))}</ul>`
}
</section>
<section class="panel" aria-labelledby="sessions-heading" id="sessions">
<h2 id="sessions-heading">${TEXT.sessionsHeading}</h2>
<p class="hint">${TEXT.sessionsIntro}</p>
<ul class="items">
${v.sessions.map((s) => sessionItem(s, form.csrf))}</ul>
${
  others > 0
    ? html`<form method="post" action="${ACCOUNT_PATH}" class="below">
${hidden('csrf', form.csrf)}${hidden('action', 'end-other-sessions')}
<button class="button secondary small" type="submit">${TEXT.endOthers}</button>
</form>`
    : ''
}
</section>
<section class="panel" aria-labelledby="password-heading" id="password">
<h2 id="password-heading">${TEXT.passwordHeading}</h2>
${
  v.hasPassword
    ? html`<p class="hint">${TEXT.passwordIntro}</p>
<div class="below"><a class="button secondary small" href="${ACCOUNT_PASSWORD_PATH}">${TEXT.passwordChange}</a></div>`
    : html`<p class="hint">${TEXT.passwordNone}</p>`
}
</section>
<form method="post" action="${SIGN_OUT_PATH}">
${hidden('csrf', form.csrf)}
<div class="actions"><button class="button secondary" type="submit">${TEXT.signOut}</button></div>
</form>`,
  }
}

export function renderPasswordForm(v: { username: string }, form: { csrf: string; failure?: PasswordChangeFailure | undefined }): Page {
  const failure = form.failure
  return {
    status: failure === undefined ? 200 : failure === 'wrong_password' ? 401 : 400,
    title: TEXT.passwordTitle,
    body: html`<h1>${TEXT.passwordTitle}</h1>
<p class="who">${TEXT.signedInAs} <strong id="username">${v.username}</strong></p>
${alertBox(failure && TEXT.passwordFailures[failure])}
<form method="post" action="${ACCOUNT_PASSWORD_PATH}">
${hidden('csrf', form.csrf)}
<input type="text" name="username" value="${v.username}" autocomplete="username" hidden>
<label for="current_password">${TEXT.currentPassword}</label>
<input id="current_password" name="current_password" type="password" autocomplete="current-password" required autofocus>
<label for="new_password">${TEXT.newPassword}</label>
<p class="hint" id="new-password-hint">${TEXT.newPasswordHint}</p>
<input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" required aria-describedby="new-password-hint">
<label for="confirm_password">${TEXT.confirmPassword}</label>
<input id="confirm_password" name="confirm_password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" required>
<div class="actions">
<button class="button primary" type="submit">${TEXT.passwordChange}</button>
<a class="button secondary" href="${ACCOUNT_PATH}">${TEXT.cancel}</a>
</div>
</form>`,
  }
}

export function renderPasswordChanged(sessionsEnded: number): Page {
  return {
    status: 200,
    title: TEXT.passwordChangedTitle,
    body: html`<h1>${TEXT.passwordChangedTitle}</h1>
<div class="success" role="status"><p>${TEXT.passwordChanged}</p>${sessionsEnded > 0 ? html`<p>${TEXT.othersEnded(sessionsEnded)}</p>` : ''}</div>
<div class="actions"><a class="button primary" href="${ACCOUNT_PATH}">${TEXT.backToAccount}</a></div>`,
  }
}
