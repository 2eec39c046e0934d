// The security headers on every page a person can meet (Content-Security-Policy, X-Frame-Options,
// Referrer-Policy, Cache-Control: no-store, nosniff), one layout with the served stylesheet and
// no script or inline style anywhere; and any HTML a route sends gets the headers too.
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PAGE_CSP } from '../../src/pages/html.js'
import { STYLESHEET_PATH } from '../../src/pages/style.js'
import { approvalPath, lastRequestId } from '../flows/ciba/approve-helper.js'
import { FORM, form } from '../helpers/app.js'
import { BANK, createCibaTestApp, startCiba, type CibaTestApp } from '../flows/ciba/harness.js'
import { csrfIn } from '../helpers/http.js'
import { signInWithForm } from '../helpers/sign-in.js'

let authz: CibaTestApp
beforeAll(async () => {
  authz = await createCibaTestApp({
    env: { RATE_LIMIT_SIGN_IN: '20' },
    beforeReady: async (app) => {
      app.get('/test/bare-html', async (_req, reply) => reply.type('text/html; charset=utf-8').send('<!doctype html><p>bare</p>'))
    },
  })
})
afterAll(() => authz?.close())

const EXPECTED = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': PAGE_CSP,
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
}

async function start(user = 'alice') {
  const userCode: Record<string, string> = user === 'bob' ? { user_code: '4711' } : {}
  expect((await startCiba(authz, { ...BANK, scope: 'openid email', login_hint: user, ...userCode })).statusCode).toBe(200)
  return lastRequestId(authz)
}

/** Every page state, by name, with its expected status. */
async function everyPage(): Promise<Array<[string, number, LightMyRequestResponse]>> {
  const get = (url: string, cookie = '') => authz.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} })
  const post = (url: string, cookie: string, fields: Record<string, string>, address = '127.0.0.1') =>
    authz.app.inject({ method: 'POST', url, remoteAddress: address, headers: { ...FORM, cookie }, payload: form(fields) })
  const pages: Array<[string, number, LightMyRequestResponse]> = []
  pages.push(['landing', 200, await get('/')])
  const id = await start()
  const signInPage = await get(`/account/sign-in?return_to=${encodeURIComponent(approvalPath(id))}`)
  pages.push(['sign-in', 200, signInPage])
  pages.push(['sign-in failed', 401, (await signInWithForm(authz.app, { returnTo: approvalPath(id) }, 'alice', 'wrong')).res])
  const { cookie } = await signInWithForm(authz.app, { returnTo: approvalPath(id) }, 'alice', 'alice-pw')
  const decision = await get(approvalPath(id), cookie)
  pages.push(['decision', 200, decision])
  pages.push(['decision unanswered', 400, await post(approvalPath(id), cookie, { csrf: csrfIn(decision.body) })])
  pages.push(['form refused', 403, await post(approvalPath(id), cookie, { csrf: 'x', decision: 'approve' })])
  pages.push(['approved', 200, await post(approvalPath(id), cookie, { csrf: csrfIn(decision.body), decision: 'approve' })])
  pages.push(['already decided', 410, await get(approvalPath(id), cookie)])
  pages.push(['unknown request', 404, await get('/ciba/approve?request=nope', cookie)])
  pages.push(['wrong user', 403, await get(approvalPath(await start('bob')), cookie)])
  const late = await start()
  const lateForm = await get(approvalPath(late), cookie)
  const withoutSession = cookie
    .split('; ')
    .filter((c) => !c.startsWith('__Host-authz-session='))
    .join('; ')
  pages.push(['signed out on post', 401, await post(approvalPath(late), withoutSession, { csrf: csrfIn(lateForm.body) })])
  authz.clock.advance(121)
  pages.push(['expired', 410, await get(approvalPath(late), cookie)])
  pages.push(['account', 200, await get('/account', cookie)])
  const ask = await get('/account/sign-out', cookie)
  pages.push(['sign out?', 200, ask])
  pages.push(['signed out', 200, await post('/account/sign-out', cookie, { csrf: csrfIn(ask.body) })])
  pages.push([
    'error page',
    400,
    await authz.app.inject({ method: 'POST', url: '/account/sign-in', headers: { 'content-type': 'application/xml' }, payload: '<x/>' }),
  ])
  let limited = await post('/account/sign-in', '', {}, '192.0.2.9')
  for (let i = 0; i < 20; i++) limited = await post('/account/sign-in', '', {}, '192.0.2.9')
  pages.push(['too many attempts', 429, limited])
  return pages
}

describe('every page', () => {
  it('carries the security headers, the one layout and no script or inline style', async () => {
    const pages = await everyPage()
    for (const [name, status, res] of pages) {
      expect({ name, status: res.statusCode }).toEqual({ name, status })
      expect({ name, ...res.headers }).toMatchObject({ name, ...EXPECTED })
      expect(res.body, name).toContain('<html lang="en">')
      expect(res.body, name).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">')
      expect(res.body, name).toContain(`<link rel="stylesheet" href="${STYLESHEET_PATH}">`)
      expect(res.body, name).not.toMatch(/<script|<style|\sstyle=|\son[a-z]+=/i)
      expect(res.body.match(/<h1>/g), name).toHaveLength(1)
    }
    expect(PAGE_CSP).toBe("default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
  })

  it('serves the stylesheet as CSS, cacheable for good at its content-addressed path', async () => {
    const res = await authz.app.inject({ method: 'GET', url: STYLESHEET_PATH })
    expect(res.statusCode).toBe(200)
    expect(res.headers).toMatchObject({
      'content-type': 'text/css; charset=utf-8',
      'cache-control': 'public, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
    })
    expect(res.body).toContain('.button{')
  })

  it('adds the headers to HTML sent by any route that forgot them', async () => {
    const res = await authz.app.inject({ method: 'GET', url: '/test/bare-html' })
    expect(res.headers).toMatchObject(EXPECTED)
  })
})
