// The form_post response (OAuth 2.0 Form Post Response Mode §2): the code or the error carried to
// the client in an HTML form that submits itself. The authorization endpoint answers with it, and
// so does the error handler for an error that redirects.
import { createHash } from 'node:crypto'
import { html, SafeHtml, type Page } from './html.js'
import { layout } from './layout.js'
import type { Look } from './look.js'
import type { Messages } from './messages/index.js'

// The only script we ever send: it submits the form at once. Allowed by its hash alone.
const SUBMIT = 'document.forms[0].submit()'
const SUBMIT_HASH = `'sha256-${createHash('sha256').update(SUBMIT).digest('base64')}'`

/**
 * The form_post response page, in the person's language: the parameters as hidden fields posted
 * to the redirect URI. Its CSP allows that one script and form submission to that origin; without
 * JavaScript the person presses Continue.
 */
export function formPostResponse(
  redirectUri: string,
  params: Record<string, string>,
  look: Look,
  m: Messages,
): { headers: Record<string, string>; body: string } {
  const origin = new URL(redirectUri).origin
  const headers = look.headers([origin])
  headers['content-security-policy'] = `${headers['content-security-policy']}; script-src ${SUBMIT_HASH}`
  const page: Pick<Page, 'title' | 'body'> = {
    title: m.text('formPost.title'),
    body: html`<h1>${m.text('formPost.title')}</h1>
<form method="post" action="${redirectUri}">
${Object.entries(params).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
<noscript><p>${m.text('formPost.noScript')}</p></noscript>
<div class="actions"><button class="button primary" type="submit">${m.text('common.continue')}</button></div>
</form>
<script>${new SafeHtml(SUBMIT)}</script>`,
  }
  return { headers, body: layout(page, look, m) }
}
