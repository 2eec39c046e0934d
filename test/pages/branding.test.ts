// The operator's look on the pages a person sees: the product's name and logo in the header and
// the title, the support link in the footer, the logo's origin (and nothing else) in the pages'
// img-src, and the primary colour in the stylesheet the pages link to. Unset: the neutral look.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PAGE_CSP } from '../../src/pages/html.js'
import { STYLESHEET_PATH } from '../../src/pages/style.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { authorizeUrl, createAuthorizeTestApp, located } from '../flows/authorization-code/harness.js'

const BRAND = {
  BRAND_NAME: 'Acme <ID>',
  BRAND_LOGO_URL: 'https://cdn.acme.example/brand/logo.svg',
  BRAND_PRIMARY_COLOR: '#0A7D5A',
  BRAND_SUPPORT_URL: 'https://help.acme.example/sign-in?from=authz&x="y"',
}

let branded: TestApp
let neutral: TestApp
beforeAll(async () => {
  branded = await createAuthorizeTestApp(BRAND)
  neutral = await createTestApp()
})
afterAll(async () => {
  await branded?.close()
  await neutral?.close()
})

const stylesheetOf = (body: string) => /<link rel="stylesheet" href="([^"]+)">/.exec(body)![1]!

describe('a branded page', () => {
  it('shows the logo and the name in the header and title, and the support link, escaped', async () => {
    const res = await branded.app.inject({ method: 'GET', url: '/account/sign-in' })
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain(
      '<header class="site with-logo"><img src="https://cdn.acme.example/brand/logo.svg" alt=""><span id="brand">Acme &lt;ID&gt;</span></header>',
    )
    expect(res.body).toContain('<title>Sign in · Acme &lt;ID&gt;</title>')
    expect(res.body).toContain(
      '<footer><p>Only enter your password on pages of authz.test.</p><p><a href="https://help.acme.example/sign-in?from=authz&amp;x=&quot;y&quot;" id="support">Help and support</a></p></footer>',
    )
    const german = await branded.app.inject({ method: 'GET', url: '/account/sign-in', headers: { 'accept-language': 'de' } })
    expect(german.body).toContain(
      '<a href="https://help.acme.example/sign-in?from=authz&amp;x=&quot;y&quot;" id="support">Hilfe und Support</a>',
    )
  })

  it("allows images from the logo's origin only, on every page, error and form_post pages included", async () => {
    const csp = PAGE_CSP.replace("style-src 'self';", "style-src 'self'; img-src https://cdn.acme.example;")
    const signIn = await branded.app.inject({ method: 'GET', url: '/account/sign-in' })
    expect(signIn.headers['content-security-policy']).toBe(csp)
    const error = await branded.app.inject({ method: 'GET', url: authorizeUrl({ client_id: 'nobody' }) })
    expect(error.statusCode).toBe(400)
    expect(error.headers['content-security-policy']).toBe(csp)
    expect(error.body).toContain('<span id="brand">Acme &lt;ID&gt;</span>')
    const formPost = await branded.app.inject({ method: 'GET', url: authorizeUrl({ response_mode: 'form_post', scope: 'nope' }) })
    expect(formPost.statusCode).toBe(200)
    expect(formPost.headers['content-security-policy']).toMatch(
      /^default-src 'none'; style-src 'self'; img-src https:\/\/cdn\.acme\.example; form-action 'self' https:\/\/web\.example; frame-ancestors 'none'; base-uri 'none'; script-src 'sha256-/,
    )
    expect(formPost.body).toContain('<span id="brand">Acme &lt;ID&gt;</span>')
  })

  it('links a stylesheet in the primary colour, served at its own content-addressed path', async () => {
    const page = await branded.app.inject({
      method: 'GET',
      url: located(await branded.app.inject({ method: 'GET', url: authorizeUrl() })).pathname,
    })
    const path = stylesheetOf(page.body)
    expect(path).toMatch(/^\/assets\/authz-[0-9a-f]{12}\.css$/)
    expect(path).not.toBe(STYLESHEET_PATH)
    const css = await branded.app.inject({ method: 'GET', url: path })
    expect(css.statusCode).toBe(200)
    expect(css.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expect(css.body).toContain(':root{--fg:#1b1f24;--muted:#59636e;--bg:#f2f4f7;--card:#fff;--line:#d1d9e0;--accent:#0a7d5a;')
    // The neutral stylesheet is not this app's.
    expect((await branded.app.inject({ method: 'GET', url: STYLESHEET_PATH })).statusCode).toBe(404)
  })
})

describe('an unbranded page', () => {
  it("shows the issuer's host, no logo, no support link, no img-src, the neutral stylesheet", async () => {
    const res = await neutral.app.inject({ method: 'GET', url: '/account/sign-in' })
    expect(res.body).toContain('<header class="site"><span id="brand">authz.test</span></header>')
    expect(res.body).toContain('<title>Sign in · authz.test</title>')
    expect(res.body).toContain('<footer><p>Only enter your password on pages of authz.test.</p></footer>')
    expect(res.body).not.toContain('<img')
    expect(res.headers['content-security-policy']).toBe(PAGE_CSP)
    expect(stylesheetOf(res.body)).toBe(STYLESHEET_PATH)
    const css = await neutral.app.inject({ method: 'GET', url: STYLESHEET_PATH })
    expect(css.body).toContain('--accent:#0b57d0;')
  })

  it('allows images from this origin only for a logo given as a path', async () => {
    const local = await createTestApp({ env: { BRAND_LOGO_URL: '/brand/logo.svg' } })
    try {
      const res = await local.app.inject({ method: 'GET', url: '/account/sign-in' })
      expect(res.headers['content-security-policy']).toBe(PAGE_CSP.replace("style-src 'self';", "style-src 'self'; img-src 'self';"))
      expect(res.body).toContain(
        '<header class="site with-logo"><img src="/brand/logo.svg" alt=""><span id="brand">authz.test</span></header>',
      )
    } finally {
      await local.close()
    }
  })
})
