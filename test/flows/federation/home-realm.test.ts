// The home-realm screen: a link per enabled provider the client may use beside the password form,
// enableLocalLogin, a client with one provider and no password form going straight to it, the
// email-domain step, and acr_values idp: (forwarding, never a label). Pages keep their CSP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PAGE_CSP } from '../../../src/pages/html.js'
import { FORM, form } from '../../helpers/app.js'
import { csrfIn, withCookies } from '../../helpers/http.js'
import { authorizeUrl, browser, createFederation, linkTo, located, UPSTREAM, WEB_CB, type Federation } from './harness.js'

let f: Federation
beforeAll(async () => {
  f = await createFederation()
})
afterAll(() => f?.close())

const CORP_APP = { client_id: 'corp-only', redirect_uri: 'https://corp-app.example/cb', scope: 'openid profile' }

describe('the sign-in page', () => {
  it('offers a link per enabled provider beside the password form, with the page CSP unchanged', async () => {
    const page = await browser(f).follow(authorizeUrl())
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-security-policy']).toBe(PAGE_CSP.replace("form-action 'self'", "form-action 'self' https://web.example"))
    expect(page.body).toContain('<label for="password">Password</label>')
    const corp = linkTo(page.body, 'Sign in with Corporate sign-in')
    expect(corp).toMatch(/^\/federation\/corp\/challenge\?return_to=%2Fconnect%2Fauthorize%3F/)
    expect(linkTo(page.body, 'Sign in with Partner ID')).toMatch(/^\/federation\/partner\/challenge\?/)
    expect(page.body).not.toContain('Old ID') // disabled
    // The link leads straight to the upstream: no page in between.
    const res = await browser(f).get(corp)
    expect(res.statusCode).toBe(303)
    const upstream = located(res)
    expect(upstream.origin + upstream.pathname).toBe(`${UPSTREAM}/connect/authorize`)
    expect(Object.fromEntries([...upstream.searchParams].filter(([k]) => !['state', 'nonce', 'code_challenge'].includes(k)))).toEqual({
      client_id: 'authz-rp',
      redirect_uri: 'https://authz.test/federation/corp/signin',
      response_type: 'code',
      scope: 'openid profile email',
      code_challenge_method: 'S256',
    })
  })

  it('goes straight to the one provider of a client without local login', async () => {
    const b = browser(f)
    const toSignIn = await b.get(authorizeUrl(CORP_APP))
    expect(located(toSignIn).pathname).toBe('/account/sign-in')
    const forward = await b.get(located(toSignIn).href)
    expect(forward.statusCode).toBe(303)
    expect(located(forward).pathname).toBe('/federation/corp/challenge')
    const upstream = await b.get(located(forward).href)
    expect(located(upstream).origin).toBe(UPSTREAM)
  })

  it('refuses a password for a client without local login', async () => {
    const b = browser(f)
    const signInPage = located(await b.get(authorizeUrl({ ...CORP_APP, acr_values: 'idp:corp' })))
    const page = await f.authz.app.inject({ method: 'GET', url: `/account/sign-in?return_to=${encodeURIComponent('/account')}` })
    const res = await f.authz.app.inject({
      method: 'POST',
      url: `${signInPage.pathname}${signInPage.search}`,
      headers: { ...FORM, cookie: String(page.headers['set-cookie']).split(';')[0]! },
      payload: form({ csrf: csrfIn(page.body), username: 'carol', password: 'carol-pw' }),
    })
    expect(res.statusCode).toBe(401)
    expect(res.headers['set-cookie']).toBeUndefined()
  })
})

describe('home-realm discovery by email domain', () => {
  it('forwards an address of a provider domain typed without a password, through one page naming the provider', async () => {
    const b = browser(f)
    const page = await b.follow(authorizeUrl())
    // The password must not block it: the field is not required where discovery is offered.
    expect(page.body).toMatch(
      /<input id="password" name="password" type="password" autocomplete="current-password" aria-describedby="password-hint">/,
    )
    const signInUrl = located(await b.get(authorizeUrl()))
    const res = await f.authz.app.inject({
      method: 'POST',
      url: `${signInUrl.pathname}${signInUrl.search}`,
      headers: { ...FORM, cookie: b.jars.authz },
      payload: form({ csrf: csrfIn(page.body), username: 'Alice@Example.com', password: '' }),
    })
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('<h1>Continue with Corporate sign-in</h1>')
    const next = linkTo(res.body, 'Continue with Corporate sign-in')
    expect(next).toMatch(/^\/federation\/corp\/challenge\?return_to=.*&login_hint=Alice%40Example.com$/)
    const upstream = located(await b.get(next))
    expect(upstream.origin).toBe(UPSTREAM)
    expect(upstream.searchParams.get('login_hint')).toBe('Alice@Example.com')
  })

  it('checks the password as before for any other address', async () => {
    const b = browser(f)
    const page = await b.follow(authorizeUrl())
    const signInUrl = located(await b.get(authorizeUrl()))
    const res = await f.authz.app.inject({
      method: 'POST',
      url: `${signInUrl.pathname}${signInUrl.search}`,
      headers: { ...FORM, cookie: b.jars.authz },
      payload: form({ csrf: csrfIn(page.body), username: 'carol@other.example', password: '' }),
    })
    expect(res.statusCode).toBe(401)
    expect(res.body).toContain('The username or password is incorrect')
  })
})

describe('acr_values idp:', () => {
  it('idp:corp skips the sign-in page and goes to the provider', async () => {
    // Every hop a redirect (authorize, sign-in, challenge), the last one to the upstream.
    const res = await browser(f).follow(authorizeUrl({ acr_values: 'idp:corp' }), (u) => u.origin === UPSTREAM)
    expect(res.statusCode).toBe(303)
    expect(located(res).origin + located(res).pathname).toBe(`${UPSTREAM}/connect/authorize`)
  })

  it('idp:corp with a session from the password form still goes to the provider', async () => {
    const b = browser(f)
    const page = await b.follow('/account/sign-in?return_to=%2Faccount')
    const signedIn = await f.authz.app.inject({
      method: 'POST',
      url: '/account/sign-in?return_to=%2Faccount',
      headers: { ...FORM, cookie: b.jars.authz },
      payload: form({ csrf: csrfIn(page.body), username: 'carol', password: 'carol-pw' }),
    })
    expect(signedIn.statusCode).toBe(303)
    b.jars.authz = withCookies(b.jars.authz, signedIn.headers['set-cookie'])
    // Without idp: the local session is used at once; with idp:corp it does not do.
    expect(located(await b.get(authorizeUrl())).origin + located(await b.get(authorizeUrl())).pathname).toBe(WEB_CB)
    const res = await b.follow(authorizeUrl({ acr_values: 'idp:corp' }), (u) => u.origin === UPSTREAM)
    expect(located(res).origin + located(res).pathname).toBe(`${UPSTREAM}/connect/authorize`)
  })

  it('idp:local shows the password form only', async () => {
    const page = await browser(f).follow(authorizeUrl({ acr_values: 'idp:local' }))
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('<label for="password">Password</label>')
    expect(page.body).not.toContain('Sign in with')
  })

  it.each([
    ['a scheme that does not exist', {}, 'idp:nowhere'],
    ['a disabled provider', {}, 'idp:off'],
    ['a provider the client may not use', CORP_APP, 'idp:partner'],
    ['local for a client without local login', CORP_APP, 'idp:local'],
  ])('%s is invalid_request back to the app', async (_name, client, acr) => {
    const res = await browser(f).get(authorizeUrl({ ...client, acr_values: acr }))
    expect(res.statusCode).toBe(303)
    expect(Object.fromEntries(located(res).searchParams)).toEqual({
      error: 'invalid_request',
      error_description: 'acr_values holds an idp this client may not assert',
      state: 'app-state',
      iss: 'https://authz.test',
    })
  })
})
