// The landing page at `/`, as a person who opens the server's address sees it: what this is, the
// way to their account and to the device page, and for developers the issuer, the discovery
// document, the keys and the documentation; in the layout and the language of every other page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PAGE_CSP } from '../../../src/pages/html.js'
import { STYLESHEET_PATH } from '../../../src/pages/style.js'
import { createTestApp, TEST_ISSUER, type TestApp } from '../../helpers/app.js'

let authz: TestApp
let documented: TestApp
beforeAll(async () => {
  authz = await createTestApp()
  documented = await createTestApp({
    testDb: authz.testDb,
    env: { DOCUMENTATION_URL: 'https://developers.example.com/sign-in?from="authz"' },
  })
})
afterAll(async () => {
  await documented?.close()
  await authz?.close()
})

const hrefs = (body: string) => [...body.matchAll(/<a [^>]*href="([^"]*)"/g)].map((m) => m[1])

describe('GET /', () => {
  it('is a page in the shared layout, with the headers of every page', async () => {
    const res = await authz.app.inject({ method: 'GET', url: '/' })
    expect(res.statusCode).toBe(200)
    expect(res.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': PAGE_CSP,
      'x-frame-options': 'DENY',
      'referrer-policy': 'same-origin',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    })
    expect(res.body).toContain('<title>Sign-in service · authz.test</title>')
    expect(res.body).toContain(`<link rel="stylesheet" href="${STYLESHEET_PATH}">`)
    expect(res.body).toContain('<header class="site"><span id="brand">authz.test</span></header>')
    expect(res.body).toContain('<h1>Sign-in service</h1>')
    expect(res.body).not.toMatch(/<script|<style|\sstyle=/i)
  })

  it('names the issuer and links to the account page, the device page, discovery and the keys', async () => {
    const res = await authz.app.inject({ method: 'GET', url: '/' })
    expect(res.body).toContain(`<dt>Issuer</dt><dd><code>${TEST_ISSUER}</code></dd>`)
    expect(hrefs(res.body)).toEqual(['/account', '/device', '/.well-known/openid-configuration', '/.well-known/openid-configuration/jwks'])
    expect(res.body).toContain('<a class="button primary" href="/account">Your account</a>')
    expect(res.body).toContain('<a class="button secondary" href="/device">Connect a device</a>')
    // Without DOCUMENTATION_URL, developers are told where the documentation is.
    expect(res.body).toContain('<dt>Documentation</dt><dd><code>README.md</code> and <code>docs/</code> in the authz source</dd>')
  })

  it('leads somewhere on every link: no link on it is a 404', async () => {
    const res = await authz.app.inject({ method: 'GET', url: '/' })
    const statuses = await Promise.all(
      hrefs(res.body).map(async (href) => [href, (await authz.app.inject({ method: 'GET', url: href })).statusCode] as const),
    )
    expect(statuses).toEqual([
      ['/account', 303], // to the sign-in page, which returns there
      ['/device', 200],
      ['/.well-known/openid-configuration', 200],
      ['/.well-known/openid-configuration/jwks', 200],
    ])
  })

  it('links to DOCUMENTATION_URL when it is set, escaped', async () => {
    const res = await documented.app.inject({ method: 'GET', url: '/' })
    expect(res.body).toContain(
      '<dt>Documentation</dt><dd><a href="https://developers.example.com/sign-in?from=&quot;authz&quot;">https://developers.example.com/sign-in?from=&quot;authz&quot;</a></dd>',
    )
  })

  it('speaks German for Accept-Language: de, and for ui_locales=de', async () => {
    for (const req of [
      { url: '/', headers: { 'accept-language': 'de-AT, en;q=0.5' } },
      { url: '/?ui_locales=de', headers: { 'accept-language': 'en' } },
    ]) {
      const res = await authz.app.inject({ method: 'GET', ...req })
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-language']).toBe('de')
      expect(res.body).toContain('<html lang="de">')
      expect(res.body).toContain('<title>Anmeldedienst · authz.test</title>')
      expect(res.body).toContain('<h1>Anmeldedienst</h1>')
      expect(res.body).toContain('<a class="button primary" href="/account">Ihr Konto</a>')
      expect(res.body).toContain('<a class="button secondary" href="/device">Gerät verbinden</a>')
      expect(res.body).toContain('<h2>Für Entwickler</h2>')
      expect(res.body).toContain(`<dt>Issuer (Aussteller)</dt><dd><code>${TEST_ISSUER}</code></dd>`)
      expect(res.body).toContain('<dt>Dokumentation</dt><dd><code>README.md</code> und <code>docs/</code> im Quellcode von authz</dd>')
      expect(hrefs(res.body)).toEqual([
        '/account',
        '/device',
        '/.well-known/openid-configuration',
        '/.well-known/openid-configuration/jwks',
      ])
    }
  })

  it('speaks English without Accept-Language, and for a language it does not speak', async () => {
    for (const headers of [{}, { 'accept-language': 'fr' }]) {
      const res = await authz.app.inject({ method: 'GET', url: '/', headers })
      expect(res.headers['content-language']).toBe('en')
      expect(res.body).toContain('<html lang="en">')
      expect(res.body).toContain('<h1>Sign-in service</h1>')
    }
  })

  it('answers HEAD as GET without a body', async () => {
    const res = await authz.app.inject({ method: 'HEAD', url: '/' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.body).toBe('')
  })

  it('leaves every other path as it was: JSON 404s under /connect/ and for other methods', async () => {
    for (const [method, url] of [
      ['GET', '/connect/nope'],
      ['GET', '/connect/'],
      ['POST', '/'],
    ] as const) {
      const res = await authz.app.inject({ method, url })
      expect({ method, url, status: res.statusCode, type: res.headers['content-type'] }).toEqual({
        method,
        url,
        status: 404,
        type: 'application/json; charset=utf-8',
      })
      expect(res.json()).toEqual({ error: 'not_found', error_description: 'no endpoint at this path for this method' })
    }
  })
})
