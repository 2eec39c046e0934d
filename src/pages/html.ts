// Server-rendered HTML for the pages a person uses: one layout, one stylesheet, no script at all.
// Everything interpolated is escaped. Renderers return a Page (status, title, body); the route
// helper (src/http/page-kit.ts) wraps it in the layout (src/pages/layout.ts) and sends it with the security headers.

/** HTML-escapes text for element content and quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')
}

/** A template tag that escapes every interpolation unless it is already SafeHtml. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString() {
    return this.value
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!
  values.forEach((v, i) => {
    const text = Array.isArray(v)
      ? v.map((x) => (x instanceof SafeHtml ? x.value : escapeHtml(x))).join('')
      : v instanceof SafeHtml
        ? v.value
        : v === undefined || v === null || v === false
          ? ''
          : escapeHtml(v)
    out += text + strings[i + 1]!
  })
  return new SafeHtml(out)
}

/** What a page renderer returns. */
export interface Page {
  status: number
  /** The document title (the layout adds the product's name). */
  title: string
  body: SafeHtml
  /** Scripts of ours the page loads (src/pages/scripts.ts); none by default. */
  scripts?: ReadonlyArray<'passkeys'>
}

/**
 * No scripts, no framing, styles only from our stylesheet, images only from the logo's origin,
 * forms post only to us (plus origins a flow redirects to after a form: browsers apply
 * form-action to those redirects too).
 */
export function pageCsp(
  formActionOrigins: readonly string[] = [],
  imgSources: readonly string[] = [],
  scriptSources: readonly string[] = [],
): string {
  return [
    "default-src 'none'",
    "style-src 'self'",
    ...(imgSources.length > 0 ? [`img-src ${imgSources.join(' ')}`] : []),
    `form-action ${["'self'", ...formActionOrigins].join(' ')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    // Only the pages that load our scripts (the passkey forms) allow scripts, and only from here.
    ...(scriptSources.length > 0 ? [`script-src ${scriptSources.join(' ')}`] : []),
  ].join('; ')
}

export const PAGE_CSP = pageCsp()

/**
 * The headers of every HTML response. Referrer-Policy is same-origin, not no-referrer: under
 * no-referrer browsers send `Origin: null` with our own form posts, which would leave the Origin
 * check (src/http/page-kit.ts) nothing to compare; same-origin still sends nothing to other sites.
 */
export function pageHeaders(
  formActionOrigins: readonly string[] = [],
  imgSources: readonly string[] = [],
  scriptSources: readonly string[] = [],
): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': pageCsp(formActionOrigins, imgSources, scriptSources),
    'cache-control': 'no-store',
    pragma: 'no-cache',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
    'x-frame-options': 'DENY',
  }
}

export const PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze(pageHeaders())

/** A paragraph of the alert box (role=alert: read out by screen readers at once). */
export function alertBox(message: string | SafeHtml | undefined, id?: string): SafeHtml | string {
  if (!message) return ''
  // An id lets the field the message is about point at it (aria-describedby).
  return id
    ? html`<div class="alert" role="alert" id="${id}"><p>${message}</p></div>`
    : html`<div class="alert" role="alert"><p>${message}</p></div>`
}
