// The document around every page: the request's language, the operator's look (src/pages/look.ts).
import { html, type Page } from './html.js'
import type { Look } from './look.js'
import type { Messages } from './messages/index.js'

/** A page in the request's language: the page kit calls it with the language it chose. */
export type LocalizedPage = (m: Messages) => Page

/** A page as routes hand it to the page kit: fixed, or rendered in the request's language. */
export function pageIn(page: Page | LocalizedPage, m: Messages): Page {
  return typeof page === 'function' ? page(m) : page
}

/**
 * The whole document in the request's language: the product's logo and name above the page's
 * card, the host to check and the support link below it.
 */
export function layout(page: Pick<Page, 'title' | 'body' | 'scripts'>, look: Look, m: Messages): string {
  const scripts = (page.scripts ?? []).flatMap((name) => look.scripts[name])
  return html`<!doctype html>
<html lang="${m.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · ${look.name}</title>
<link rel="stylesheet" href="${look.stylesheet.path}">
${scripts.map(
  (s) => html`<script src="${s.path}" defer></script>
`,
)}</head>
<body>
<header class="site${look.logoUrl ? ' with-logo' : ''}">${look.logoUrl ? html`<img src="${look.logoUrl}" alt="">` : ''}<span id="brand">${look.name}</span></header>
<main>
${page.body}
</main>
<footer><p>${m.text('layout.footer', { site: look.host })}</p>${look.supportUrl ? html`<p><a href="${look.supportUrl}" id="support">${m.text('layout.support')}</a></p>` : ''}</footer>
</body>
</html>
`.value
}
