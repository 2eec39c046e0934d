// The pages' language as a person meets it: English by default, German for Accept-Language: de,
// and for ui_locales=de carried from the authorization request through sign-in to consent
// (OpenID Connect Core §3.1.2.1), ahead of the browser's Accept-Language.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../helpers/app.js'
import { signInWithForm } from '../helpers/sign-in.js'
import { authorizeUrl, consent, createAuthorizeTestApp, located, signInAt, WEB_CB } from '../flows/authorization-code/harness.js'

let authz: TestApp
beforeAll(async () => {
  authz = await createAuthorizeTestApp()
})
afterAll(() => authz?.close())

const get = (url: string, headers: Record<string, string> = {}) => authz.app.inject({ method: 'GET', url, headers })
const h1 = (body: string) => /<h1>([^<]*)<\/h1>/.exec(body)?.[1]

describe('the language of a page', () => {
  it('is English without a preference, with <html lang="en"> and Content-Language', async () => {
    const res = await get('/account/sign-in')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-language']).toBe('en')
    expect(res.body).toContain('<html lang="en">')
    expect(h1(res.body)).toBe('Sign in')
    expect(res.body).toContain('<label for="username">Username</label>')
    expect(res.body).toContain('<footer><p>Only enter your password on pages of authz.test.</p></footer>')
  })

  it('is German for Accept-Language: de, and for a regional tag weighted above English', async () => {
    for (const accept of ['de', 'en;q=0.4, de-CH;q=0.9']) {
      const res = await get('/account/sign-in', { 'accept-language': accept })
      expect(res.headers['content-language']).toBe('de')
      expect(res.body).toContain('<html lang="de">')
      expect(res.body).toContain('<title>Anmelden · authz.test</title>')
      expect(h1(res.body)).toBe('Anmelden')
      expect(res.body).toContain('<p class="lead">bei Ihrem Konto</p>')
      expect(res.body).toContain('<label for="username">Benutzername</label>')
      expect(res.body).toContain('<label for="password">Passwort</label>')
      expect(res.body).toContain('<button class="button primary" type="submit">Anmelden</button>')
      expect(res.body).toContain('<footer><p>Geben Sie Ihr Passwort nur auf Seiten von authz.test ein.</p></footer>')
    }
  })

  it('stays English for a language it does not speak', async () => {
    const res = await get('/account/sign-in', { 'accept-language': 'fr-FR, ja;q=0.5' })
    expect(res.body).toContain('<html lang="en">')
  })

  it('is German on error pages too (the error_description stays as the protocol sends it)', async () => {
    const res = await get(authorizeUrl({ client_id: 'nobody' }), { 'accept-language': 'de' })
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('<html lang="de">')
    expect(h1(res.body)).toBe('Diese Anfrage ist nicht gültig')
    expect(res.body).toContain('Die Seite kann für diese Anfrage nicht angezeigt werden.')
  })
})

describe('ui_locales on the authorization request', () => {
  it('carries German through the sign-in page and its form to the consent page, over Accept-Language: en', async () => {
    const english = { 'accept-language': 'en' }
    const first = await get(authorizeUrl({ ui_locales: 'fr-CA de-AT en', scope: 'openid email offline_access' }), english)
    expect(first.statusCode).toBe(303)
    const signIn = located(first)
    const page = await get(`${signIn.pathname}${signIn.search}`, english)
    expect(page.body).toContain('<html lang="de">')
    expect(page.body).toContain('<p class="lead">um mit <strong id="client-name">Web &lt;App&gt;</strong> fortzufahren</p>')

    // A wrong password: the page that answers the form is German too.
    const wrong = await signInWithForm(authz.app, { location: `${signIn.pathname}${signIn.search}` }, 'alice', 'wrong')
    expect(wrong.res.statusCode).toBe(401)
    expect(wrong.res.body).toContain('<html lang="de">')
    expect(wrong.res.body).toContain('Benutzername oder Passwort ist falsch')

    const { cookie, next } = await signInAt(authz, `${signIn.pathname}${signIn.search}`)
    const shown = await get(next, { ...english, cookie })
    expect(shown.statusCode).toBe(200)
    expect(shown.headers['content-language']).toBe('de')
    expect(shown.body).toContain('<html lang="de">')
    expect(shown.body).toContain('<title>Zugriff erlauben · authz.test</title>')
    expect(h1(shown.body)).toBe('Web &lt;App&gt; möchte auf Ihr Konto zugreifen')
    expect(shown.body).toContain('<h2>Web &lt;App&gt; erhält Zugriff auf</h2>')
    expect(shown.body).toContain(
      '<li data-scope="offline_access"><strong>Angemeldet bleiben</strong><span>Zugriff auch, wenn Sie die Anwendung gerade nicht nutzen</span></li>',
    )
    expect(shown.body).toContain('<button class="button primary" type="submit" name="decision" value="approve">Erlauben</button>')
    expect(shown.body).toContain('<button class="button secondary" type="submit" name="decision" value="deny">Ablehnen</button>')

    // The decision still works: the consent form's action keeps the request, ui_locales included.
    const res = await consent(authz, next, cookie, 'approve')
    expect(res.statusCode).toBe(303)
    expect(`${located(res).origin}${located(res).pathname}`).toBe(WEB_CB)
  })

  it('falls back to Accept-Language when it names no language we speak', async () => {
    const first = await get(authorizeUrl({ ui_locales: 'fr ja' }), { 'accept-language': 'de' })
    const signIn = located(first)
    const page = await get(`${signIn.pathname}${signIn.search}`, { 'accept-language': 'de' })
    expect(page.body).toContain('<html lang="de">')
    const english = await get(`${signIn.pathname}${signIn.search}`)
    expect(english.body).toContain('<html lang="en">')
  })
})
