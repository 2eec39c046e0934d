// The operator's look of every page (BRAND_* settings, src/config.ts): the product's name and
// logo in the header, the primary colour in the stylesheet, a support link in the footer. The
// neutral defaults: the issuer's host as the name, no logo, a blue accent, no support link.
import { pageHeaders } from './html.js'
import { createPageScripts, type PageScripts } from './scripts.js'
import { DEFAULT_PRIMARY_COLOR, stylesheet, stylesheetPath } from './style.js'

export interface BrandSettings {
  issuer: string
  brandName: string | undefined
  /** An https:// URL or a local path (checked by src/config.ts). */
  brandLogoUrl: string | undefined
  /** #rrggbb with at least 4.5:1 against white (checked by src/config.ts). */
  brandPrimaryColor: string | undefined
  brandSupportUrl: string | undefined
}

export interface Look {
  /** The product's name: the header, and every page's title. */
  readonly name: string
  readonly logoUrl: string | undefined
  readonly supportUrl: string | undefined
  /** The issuer's host: the footer names it, the address to check before typing a password. */
  readonly host: string
  readonly stylesheet: { readonly path: string; readonly css: string }
  /** The headers of an HTML page (its CSP allows the logo's origin, and forms to these origins; our scripts when it loads them). */
  headers(formActionOrigins?: readonly string[], opts?: { scripts?: boolean }): Record<string, string>
  /** The scripts a page may load (src/pages/scripts.ts). */
  readonly scripts: PageScripts
}

export function createLook(settings: BrandSettings): Look {
  const host = new URL(settings.issuer).host
  const css = stylesheet(settings.brandPrimaryColor ?? DEFAULT_PRIMARY_COLOR)
  const logo = settings.brandLogoUrl
  // A path is served by this origin (or the proxy in front of it); a URL by its own origin.
  const imgSources = logo === undefined ? [] : logo.startsWith('/') ? ["'self'"] : [new URL(logo).origin]
  return {
    name: settings.brandName ?? host,
    logoUrl: logo,
    supportUrl: settings.brandSupportUrl,
    host,
    stylesheet: { path: stylesheetPath(css), css },
    headers: (formActionOrigins = [], opts) => pageHeaders(formActionOrigins, imgSources, opts?.scripts ? ["'self'"] : []),
    scripts: createPageScripts(),
  }
}

/** The neutral look for an issuer: no BRAND_* setting. */
export function defaultLook(issuer: string): Look {
  return createLook({ issuer, brandName: undefined, brandLogoUrl: undefined, brandPrimaryColor: undefined, brandSupportUrl: undefined })
}
