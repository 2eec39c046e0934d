// The one stylesheet of every page, served as a file (src/http/assets.ts) so that the
// Content-Security-Policy allows styles from 'self' only: no inline style anywhere. Phone first:
// one column, 44 px touch targets, buttons side by side only where they fit. The operator's
// primary colour (BRAND_PRIMARY_COLOR) is the accent; its hover, tint and focus ring are mixed
// from it, so one setting recolours every page.
import { createHash } from 'node:crypto'
import { mix } from '../domain/colour.js'

/** The accent without BRAND_PRIMARY_COLOR: a neutral blue, 6.4:1 against white. */
export const DEFAULT_PRIMARY_COLOR = '#0b57d0'

/** The stylesheet with this accent colour (#rrggbb, checked for contrast by src/config.ts). */
export function stylesheet(accent: string): string {
  const vars = `--accent:${accent};--accent-dark:${mix(accent, '#000000', 0.2)};--accent-tint:${mix(accent, '#ffffff', 0.92)};--focus:${mix(accent, '#ffffff', 0.45)}`
  return `:root{--fg:#1b1f24;--muted:#59636e;--bg:#f2f4f7;--card:#fff;--line:#d1d9e0;${vars};--danger:#b3261e;--danger-bg:#fcebea;--ok:#146c2e;--ok-bg:#e6f4ea}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
.site{display:flex;align-items:center;gap:.5rem;max-width:30rem;min-height:3.75rem;margin:0 auto;padding:1.5rem 1rem .75rem;color:var(--fg);font-size:.9375rem;font-weight:600;letter-spacing:.01em;overflow-wrap:anywhere}
.site:not(.with-logo)::before{content:"";flex:none;width:.7rem;height:.7rem;border-radius:3px;background:var(--accent)}
.site img{display:block;height:2rem;width:auto;max-width:10rem;object-fit:contain}
main{max-width:30rem;margin:0 auto 1.5rem;padding:1.75rem 1.5rem;background:var(--card);border:1px solid var(--line);border-radius:12px;box-shadow:0 1px 3px rgba(27,31,36,.06)}
footer{max-width:30rem;margin:0 auto 2rem;padding:0 1rem;color:var(--muted);font-size:.8125rem}
footer p{margin:.25rem 0}
@media (max-width:32rem){.site{padding-top:1rem}main{border-radius:0;border-left:0;border-right:0;padding:1.25rem 1rem}}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 .5rem;overflow-wrap:anywhere}
h2{font-size:1rem;margin:1.5rem 0 .5rem}
p{margin:.5rem 0}
a{color:var(--accent)}
.lead{color:var(--muted);margin-bottom:1rem}
.who{color:var(--muted);font-size:.9375rem;overflow-wrap:anywhere}
label{display:block;margin-top:1rem;font-weight:600}
input[type=text],input[type=password]{display:block;width:100%;min-height:2.75rem;margin-top:.375rem;padding:.5rem .75rem;font:inherit;color:inherit;background:#fff;border:1px solid #8c959f;border-radius:8px}
input:focus-visible,button:focus-visible,a:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.check{display:flex;gap:.625rem;align-items:flex-start;font-weight:400}
.check input{width:1.25rem;height:1.25rem;margin:.125rem 0 0;flex:none}
.actions{display:flex;flex-wrap:wrap;gap:.75rem;margin-top:1.5rem}
.button{flex:1 1 9rem;display:inline-flex;align-items:center;justify-content:center;min-height:2.75rem;padding:.5rem 1.25rem;font:inherit;font-weight:600;text-decoration:none;border:1px solid var(--accent);border-radius:8px;cursor:pointer}
.primary{background:var(--accent);color:#fff}
.primary:hover{background:var(--accent-dark);border-color:var(--accent-dark)}
.secondary{background:#fff;color:var(--accent)}
.secondary:hover{background:var(--accent-tint)}
.alert,.notice,.success{margin:1rem 0;padding:.75rem 1rem;border-radius:8px;border-left:4px solid}
.alert{background:var(--danger-bg);border-color:var(--danger)}
.notice{background:var(--accent-tint);border-color:var(--accent)}
.success{background:var(--ok-bg);border-color:var(--ok)}
.unverified{background:var(--danger-bg);border-color:var(--danger)}
.unverified p{margin:.25rem 0}
.unverified .label{font-weight:600}
.unverified .host{font:700 1.375rem/1.25 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
.scopes{list-style:none;margin:0;padding:0;border:1px solid var(--line);border-radius:8px}
.scopes li{padding:.625rem .875rem;border-top:1px solid var(--line)}
.scopes li:first-child{border-top:0}
.scopes strong{display:block;font-weight:600}
.scopes span{display:block;color:var(--muted);font-size:.875rem}
.code{margin:.5rem 0;padding:.75rem;font:700 1.5rem/1.25 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;letter-spacing:.08em;text-align:center;overflow-wrap:anywhere;border:2px dashed #8c959f;border-radius:8px}
.details{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem;margin:1rem 0 0;font-size:.9375rem}
.details dt{color:var(--muted)}
.details dd{margin:0;overflow-wrap:anywhere}
.hint{margin:.25rem 0 0;color:var(--muted);font-size:.875rem}
.or{display:flex;align-items:center;gap:.75rem;margin:1.5rem 0 0;color:var(--muted);font-size:.875rem}
.or::before,.or::after{content:"";flex:1;border-top:1px solid var(--line)}
.providers{display:flex;flex-direction:column;gap:.75rem;margin-top:1rem}
.providers .button{flex:none}
.panel{margin-top:1.75rem;padding-top:1.25rem;border-top:1px solid var(--line)}
.panel h2{margin:0 0 .25rem;font-size:1.0625rem}
.panel .hint{margin-bottom:.75rem}
.empty{color:var(--muted)}
.items{list-style:none;margin:0;padding:0;border:1px solid var(--line);border-radius:8px}
.item{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;padding:.75rem .875rem;border-top:1px solid var(--line)}
.item:first-child{border-top:0}
.item.current{background:#f6f8fb}
.item-main{flex:1 1 12rem;min-width:0}
.item-title{display:block;font-weight:600;overflow-wrap:anywhere}
.item .meta,.item-text{display:block;color:var(--muted);font-size:.875rem;overflow-wrap:anywhere}
.item form{margin:0}
.badge{display:inline-block;margin-left:.375rem;padding:0 .5rem;border-radius:999px;background:var(--ok-bg);color:var(--ok);font-size:.75rem;font-weight:600;vertical-align:.1em}
.button.small{flex:none;min-height:2.75rem;padding:.375rem .875rem;font-size:.9375rem}
.danger{background:#fff;color:var(--danger);border-color:var(--danger)}
.danger:hover{background:var(--danger-bg)}
.below{margin-top:.75rem}
input[hidden]{display:none}
input[aria-invalid=true]{border-color:var(--danger)}
.qr{display:block;width:12rem;max-width:100%;margin:1rem auto}
.qr svg{display:block;width:100%;height:auto}
.secret{display:block;margin:.25rem 0 .5rem;padding:.5rem .75rem;font:600 1rem/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;letter-spacing:.06em;overflow-wrap:anywhere;background:var(--bg);border-radius:8px}
.secret-key{margin:.75rem 0 0}
.secret-key dt{color:var(--muted);font-size:.875rem}
.secret-key dd{margin:0}
.alternative{margin-top:1.5rem;padding-top:1rem;border-top:1px solid var(--line)}
.alternative summary{min-height:2.75rem;display:flex;align-items:center;color:var(--accent);font-weight:600;cursor:pointer}
.alternative summary:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.recovery-codes{display:grid;grid-template-columns:repeat(auto-fill,minmax(11rem,1fr));gap:.5rem;margin:1rem 0;padding:0;list-style:none}
.recovery-codes li{padding:.5rem;font:600 1rem/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;text-align:center;border:1px solid var(--line);border-radius:8px}
.row-actions{display:flex;flex-wrap:wrap;gap:.75rem;margin-top:.75rem}
.row-actions form{margin:0}
`
}

/** Content-addressed, so browsers may cache it for good and a new release or colour is fetched at once. */
export function stylesheetPath(css: string): string {
  return `/assets/authz-${createHash('sha256').update(css).digest('hex').slice(0, 12)}.css`
}

/** The stylesheet of the neutral look (no BRAND_PRIMARY_COLOR), and its path. */
export const STYLESHEET = stylesheet(DEFAULT_PRIMARY_COLOR)
export const STYLESHEET_PATH = stylesheetPath(STYLESHEET)
