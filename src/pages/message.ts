// Pages that say one thing: an error, a refusal, a result. Every error a person can meet on a
// page is one of these (status and a human sentence), never JSON.
import type { PageDetail } from '../errors.js'
import { html, type Page, type SafeHtml } from './html.js'
import type { LocalizedPage } from './layout.js'
import type { MessageKey } from './messages/index.js'

export interface MessageOptions {
  status: number
  title: string
  /** Paragraphs, in order. */
  text: Array<string | SafeHtml>
  /** One way on, as a button-styled link (a local path). */
  action?: { href: string; label: string } | undefined
  tone?: 'alert' | 'success' | undefined
}

export function messagePage(o: MessageOptions): Page {
  const paragraphs = o.text.map((t) => html`<p>${t}</p>`)
  const box = o.tone ? html`<div class="${o.tone}" role="${o.tone === 'alert' ? 'alert' : 'status'}">${paragraphs}</div>` : paragraphs
  return {
    status: o.status,
    title: o.title,
    body: html`<h1>${o.title}</h1>
${box}
${o.action ? html`<div class="actions"><a class="button primary" href="${o.action.href}">${o.action.label}</a></div>` : ''}`,
  }
}

/** Titles for the OAuth error codes a page route may raise; anything else is the generic one. */
const TITLES = {
  invalid_request: 'error.invalid_request',
  not_found: 'error.not_found',
  method_not_allowed: 'error.invalid_request',
  access_denied: 'error.access_denied',
  temporarily_unavailable: 'error.temporarily_unavailable',
  server_error: 'error.server_error',
} as const satisfies Record<string, MessageKey>

/**
 * The page for an error on a page route. `description` is the error's fixed sentence (it never
 * echoes input); it is shown below 500 only, as the JSON modes do, in English as the wire has it.
 * `detail` may name what the request sent (the redirect URI that is not registered): worded in the
 * reader's language, escaped, as text, never a link.
 */
export function errorPage(e: {
  status: number
  code: string
  description: string | undefined
  detail?: PageDetail | undefined
}): LocalizedPage {
  return (m) => {
    const title = m.text(Object.hasOwn(TITLES, e.code) ? TITLES[e.code as keyof typeof TITLES] : 'error.other')
    const text: string[] = [m.text(e.status >= 500 ? 'error.server' : 'error.client')]
    if (e.status < 500 && e.description) text.push(m.text('error.details', { description: e.description }))
    if (e.status < 500 && e.detail?.kind === 'redirect-uri-not-registered')
      text.push(m.text('error.redirectUriNotRegistered', { uri: e.detail.sent }))
    return messagePage({ status: e.status, title, text, tone: 'alert' })
  }
}

/** A form refused by the CSRF defences (src/http/page-kit.ts). Nothing was changed. */
export function formRefusedPage(reason: 'cross-site' | 'token', retryHref: string): LocalizedPage {
  return (m) =>
    messagePage({
      status: 403,
      title: m.text('formRefused.title'),
      tone: 'alert',
      text: [m.text(reason === 'cross-site' ? 'formRefused.crossSite' : 'formRefused.token'), m.text('formRefused.nothingChanged')],
      action: { href: retryHref, label: m.text('formRefused.again') },
    })
}

export function tooManyAttemptsPage(): LocalizedPage {
  return (m) => messagePage({ status: 429, title: m.text('tooMany.title'), tone: 'alert', text: [m.text('tooMany.text')] })
}
