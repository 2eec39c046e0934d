// Pages that say one thing: an error, a refusal, a result. Every error a person can meet on a
// page is one of these (status and a human sentence), never JSON.
import { html, type Page, type SafeHtml } from './html.js'

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
const TITLES: Record<string, string> = {
  invalid_request: 'This request is not valid',
  not_found: 'Page not found',
  method_not_allowed: 'This request is not valid',
  access_denied: 'Access denied',
  temporarily_unavailable: 'Please try again later',
  server_error: 'Something went wrong',
}

/**
 * The page for an error on a page route. `description` is the error's fixed sentence (it never
 * echoes input); it is shown below 500 only, as the JSON modes do. `detail` may name what the
 * request sent (the redirect URI that is not registered): escaped, as text, never a link.
 */
export function errorPage(e: { status: number; code: string; description: string | undefined; detail?: string | undefined }): Page {
  const title = TITLES[e.code] ?? 'This request could not be completed'
  const text: string[] = []
  if (e.status >= 500) text.push('The server could not complete your request. Nothing was changed. Please try again in a moment.')
  else text.push('The page could not be shown for this request. Go back to the application you came from and start again.')
  if (e.status < 500 && e.description) text.push(`Details: ${e.description}.`)
  if (e.status < 500 && e.detail) text.push(e.detail)
  return messagePage({ status: e.status, title, text, tone: 'alert' })
}

/** A form refused by the CSRF defences (src/http/page-kit.ts). Nothing was changed. */
export function formRefusedPage(reason: 'cross-site' | 'token', retryHref: string): Page {
  const why =
    reason === 'cross-site'
      ? 'This form was sent from another website, not from a page of this site. For your protection it was not accepted.'
      : 'This form has expired or did not come from the page you have open here (for example after signing in again in another tab). For your protection it was not accepted.'
  return messagePage({
    status: 403,
    title: 'Form not accepted',
    tone: 'alert',
    text: [why, 'Nothing was changed.'],
    action: { href: retryHref, label: 'Start again' },
  })
}

export function tooManyAttemptsPage(): Page {
  return messagePage({
    status: 429,
    title: 'Too many attempts',
    tone: 'alert',
    text: ['There were too many attempts from your network. Please wait a minute and try again.'],
  })
}
