// The landing page: what this server is, for a person who opens its address, and where a developer
// finds its metadata and documentation. Links only: it needs no session and changes nothing.
import { html, type Page, type SafeHtml } from '../../pages/html.js'
import { ACCOUNT_PATH, DEVICE_PATH, DISCOVERY_PATH, JWKS_PATH } from '../../endpoints.js'

export interface LandingView {
  issuer: string
  /** DOCUMENTATION_URL; undefined: the page names the docs/ folder of the source. */
  documentationUrl: string | undefined
}

export function renderLanding(view: LandingView): Page {
  const docs: SafeHtml = view.documentationUrl
    ? html`<a href="${view.documentationUrl}">${view.documentationUrl}</a>`
    : html`<code>README.md</code> and <code>docs/</code> in the authz source`
  return {
    status: 200,
    title: 'Sign-in service',
    body: html`<h1>Sign-in service</h1>
<p class="lead">Applications send you here to sign in. You can also look at your account, or connect a TV or another device with the code it shows.</p>
<div class="actions">
<a class="button primary" href="${ACCOUNT_PATH}">Your account</a>
<a class="button secondary" href="${DEVICE_PATH}">Connect a device</a>
</div>
<h2>For developers</h2>
<p class="hint">An OpenID Connect provider and OAuth 2.0 authorization server. Give your app's OpenID Connect library the issuer: it finds every endpoint in the discovery document.</p>
<dl class="details">
<dt>Issuer</dt><dd><code>${view.issuer}</code></dd>
<dt>Discovery</dt><dd><a href="${DISCOVERY_PATH}">${DISCOVERY_PATH}</a></dd>
<dt>Signing keys</dt><dd><a href="${JWKS_PATH}">${JWKS_PATH}</a></dd>
<dt>Documentation</dt><dd>${docs}</dd>
</dl>`,
  }
}
