// Server-rendered HTML for the pages a person uses. Everything interpolated is escaped; there is
// no script at all, and the one style block is allowed by its hash in the Content-Security-Policy.
import { createHash } from 'node:crypto'

/** HTML-escapes text for element content and quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
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
      : v instanceof SafeHtml ? v.value : v === undefined || v === null || v === false ? '' : escapeHtml(v)
    out += text + strings[i + 1]!
  })
  return new SafeHtml(out)
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
label{display:block;margin-top:1rem;font-weight:600}input{font:inherit;width:100%;padding:.5rem;box-sizing:border-box}
button{font:inherit;padding:.5rem 1.25rem;margin:1rem .5rem 0 0;cursor:pointer}
.error{color:#8b0000;border:2px solid #8b0000;padding:.5rem 1rem}.binding{font-size:1.5rem;font-weight:700;letter-spacing:.1em}`

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64')

/** No scripts, no framing, forms post only to us; the style block by hash. */
export const PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${STYLE_HASH}'`,
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ')

export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': PAGE_CSP,
  'cache-control': 'no-store',
  pragma: 'no-cache',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
}

export function layout(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${new SafeHtml(STYLE)}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`.value
}
