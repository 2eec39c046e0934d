// The landing page: what this server is, for a person who opens its address, and where a developer
// finds its metadata and documentation. Links only: it needs no session and changes nothing.
import { html, type SafeHtml } from '../../pages/html.js'
import type { LocalizedPage } from '../../pages/layout.js'
import { ACCOUNT_PATH, DEVICE_PATH, DISCOVERY_PATH, JWKS_PATH } from '../../endpoints.js'

export interface LandingView {
  issuer: string
  /** DOCUMENTATION_URL; undefined: the page names the docs/ folder of the source. */
  documentationUrl: string | undefined
}

export function renderLanding(view: LandingView): LocalizedPage {
  return (m) => {
    const docs: SafeHtml = view.documentationUrl
      ? html`<a href="${view.documentationUrl}">${view.documentationUrl}</a>`
      : m.html('landing.documentation.source', { readme: html`<code>README.md</code>`, docs: html`<code>docs/</code>` })
    return {
      status: 200,
      title: m.text('landing.title'),
      body: html`<h1>${m.text('landing.title')}</h1>
<p class="lead">${m.text('landing.lead')}</p>
<div class="actions">
<a class="button primary" href="${ACCOUNT_PATH}">${m.text('landing.account')}</a>
<a class="button secondary" href="${DEVICE_PATH}">${m.text('landing.device')}</a>
</div>
<h2>${m.text('landing.developers')}</h2>
<p class="hint">${m.text('landing.developers.text')}</p>
<dl class="details">
<dt>${m.text('landing.issuer')}</dt><dd><code>${view.issuer}</code></dd>
<dt>${m.text('landing.discovery')}</dt><dd><a href="${DISCOVERY_PATH}">${DISCOVERY_PATH}</a></dd>
<dt>${m.text('landing.keys')}</dt><dd><a href="${JWKS_PATH}">${JWKS_PATH}</a></dd>
<dt>${m.text('landing.documentation')}</dt><dd>${docs}</dd>
</dl>`,
    }
  }
}
