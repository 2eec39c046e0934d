// The shared sign-in, session and CSRF foundation in headless Chromium, through the CIBA
// approval flow and a test-only flow: sign in once and approve two requests without a second
// password (tokens carry the sign-in's auth_time); the session id changes at sign-in; a
// cross-site POST, a missing and a foreign CSRF token are refused with a page that says so and
// change nothing; a wrong return target is ignored; one message for unknown user, wrong password
// and locked account; a flow that redirects to a client right after sign-in gets there (CSP
// form-action). A second server on another site (localhost vs 127.0.0.1) plays attacker and client.
import { createServer, type Server } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { decodeJwt } from 'jose'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { handleHash } from '../../src/stores/columns.postgres.js'
import { FORM, form } from '../helpers/app.js'
import { BANK, CIBA, createCibaTestApp, startCiba, type CibaTestApp } from '../flows/ciba/harness.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'

warnIfNoChromium('the sign-in browser tests')

let authz: CibaTestApp
let browser: Browser
let other: Server
let otherOrigin: string
const clientHits: string[] = []

/** The other site: an attacker's page with a form aimed at us, and a client's redirect URI. */
function otherSite(req: { url?: string | undefined }, res: import('node:http').ServerResponse) {
  const url = new URL(req.url ?? '/', otherOrigin)
  if (url.pathname === '/attack') {
    const fields = [...url.searchParams].filter(([k]) => k !== 'target').map(([k, v]) => `<input type="hidden" name="${k}" value="${v}">`)
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end(
      `<!doctype html><form method="post" action="${url.searchParams.get('target')}">${fields.join('')}<button>Win a prize</button></form>`,
    )
    return
  }
  clientHits.push(url.pathname + url.search)
  res.writeHead(200, { 'content-type': 'text/html' })
  res.end('<!doctype html><h1>Client</h1>')
}

/** A test-only flow on the page kit: after sign-in it redirects straight to a client's origin. */
async function testFlow(app: FastifyInstance) {
  const { pages, returnTargets } = app.authz.interaction
  returnTargets.allow({
    path: '/test/continue',
    describe: async () => ({ client: { clientId: 'web', clientName: 'Web App' }, formActionOrigins: [otherOrigin] }),
  })
  app.get('/test/continue', pages.page, async (req, reply) => {
    const session = await pages.session(req)
    if (!session) return pages.toSignIn(reply, '/test/continue')
    return reply
      .code(303)
      .headers({ location: `${otherOrigin}/cb?user=${session.username}` })
      .send()
  })
}

beforeAll(async () => {
  if (!haveChromium) return
  other = createServer(otherSite)
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', () => r()))
  otherOrigin = `http://localhost:${(other.address() as { port: number }).port}`
  authz = await createCibaTestApp({ listen: true, env: { LOCKOUT_THRESHOLD: '3' }, beforeReady: testFlow })
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await authz?.close()
  await new Promise((r) => other?.close(r))
})

async function start(params: Record<string, string> = {}) {
  const res = await startCiba(authz, { ...BANK, scope: 'openid profile', login_hint: 'alice', ...params })
  expect(res.statusCode).toBe(200)
  return { id: authz.notifications.at(-1)!.request_id, authReqId: res.json().auth_req_id as string }
}
const approval = (id: string) => `${authz.baseUrl}/ciba/approve?request=${id}`
const status = async (id: string) => (await authz.db.query('SELECT status FROM ciba_requests WHERE id = $1', [id])).rows[0]
const h1 = (page: Page) => page.locator('h1').textContent()
const sessionCookie = async (ctx: BrowserContext) => (await ctx.cookies()).find((c) => c.name === 'authz-session')?.value

/** A page whose CSP violations (any console error) are collected. */
async function watchedPage(ctx: BrowserContext) {
  const page = await ctx.newPage()
  const errors: string[] = []
  page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())))
  return { page, errors }
}

async function signInHere(page: Page, username: string, password: string) {
  await page.getByLabel('Username').fill(username)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForLoadState()
}

/** A browser signed in as alice, looking at the decision screen of `id`. */
async function signedInAt(id: string) {
  const ctx = await browser.newContext()
  const { page } = await watchedPage(ctx)
  await page.goto(approval(id))
  await signInHere(page, 'alice', 'alice-pw')
  await page.waitForURL(approval(id))
  return { ctx, page }
}

describe.skipIf(!haveChromium)('sign-in in a browser', () => {
  it('signs in once and approves two requests without a second password; the session id changes at every sign-in', async () => {
    const r1 = await start()
    const r2 = await start()
    const ctx = await browser.newContext()
    const planted = 'p'.repeat(43)
    await ctx.addCookies([{ name: 'authz-session', value: planted, url: authz.baseUrl }])
    const { page, errors } = await watchedPage(ctx)
    await page.goto(approval(r1.id))
    expect(page.url()).toBe(`${authz.baseUrl}/account/sign-in?return_to=${encodeURIComponent(`/ciba/approve?request=${r1.id}`)}`)
    expect(await page.locator('#client-name').textContent()).toBe('Bank <App>') // before any password is typed
    await signInHere(page, 'alice', 'alice-pw')
    const signedInAt = authz.clock.now()
    await page.waitForURL(approval(r1.id))
    const first = (await sessionCookie(ctx))!
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(first).not.toBe(planted)
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.waitForLoadState()
    expect(await h1(page)).toBe('Approved')

    authz.clock.advance(30) // the second approval comes later; auth_time stays the sign-in's
    await page.goto(approval(r2.id))
    expect(await h1(page)).toBe('Bank <App> asks for your approval')
    expect(await page.locator('input[type=password]').count()).toBe(0)
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.waitForLoadState()
    expect(await h1(page)).toBe('Approved')
    expect([await status(r1.id), await status(r2.id)]).toEqual([{ status: 'approved' }, { status: 'approved' }])
    expect(await sessionCookie(ctx)).toBe(first)

    for (const r of [r1, r2]) {
      const res = await authz.app.inject({
        method: 'POST',
        url: '/connect/token',
        headers: FORM,
        payload: form({ ...BANK, grant_type: CIBA, auth_req_id: r.authReqId }),
      })
      expect(res.statusCode).toBe(200)
      expect(decodeJwt(res.json().id_token as string)).toMatchObject({
        sub: 'u-alice',
        auth_time: Math.floor(signedInAt / 1000),
        amr: ['pwd'],
      })
    }

    await page.goto(`${authz.baseUrl}/account/sign-in?return_to=%2Faccount`)
    expect(await page.locator('.notice').textContent()).toBe('You are signed in as alice. Signing in here replaces that session.')
    await signInHere(page, 'alice', 'alice-pw')
    expect(page.url()).toBe(`${authz.baseUrl}/account`)
    const second = (await sessionCookie(ctx))!
    expect(second).not.toBe(first)
    const { rows } = await authz.db.query('SELECT id_hash FROM user_sessions WHERE id_hash = ANY($1)', [
      [handleHash(first), handleHash(second), handleHash(planted)],
    ])
    expect(rows).toEqual([{ id_hash: handleHash(second) }])
    expect(errors).toEqual([])
    await ctx.close()
  })

  it('refuses a cross-site POST with a page that says so, and changes nothing', async () => {
    const r = await start()
    const { ctx, page } = await signedInAt(r.id)
    const token = await page.locator('input[name=csrf]').inputValue() // even the right token does not help
    const attacker = await ctx.newPage()
    await attacker.goto(`${otherOrigin}/attack?target=${encodeURIComponent(approval(r.id))}&csrf=${token}&decision=approve`)
    await attacker.getByRole('button', { name: 'Win a prize' }).click()
    await attacker.waitForURL(approval(r.id))
    expect(await h1(attacker)).toBe('Form not accepted')
    expect(await attacker.locator('.alert').textContent()).toContain('This form was sent from another website')
    expect(await attacker.locator('.alert').textContent()).toContain('Nothing was changed.')
    expect(await status(r.id)).toEqual({ status: 'pending' })
    await ctx.close()
  })

  it('refuses a missing and a foreign CSRF token with a page that says so, and changes nothing', async () => {
    const r = await start()
    const a = await signedInAt(r.id)
    const b = await signedInAt(r.id) // another browser of the same person
    const foreign = await b.page.locator('input[name=csrf]').inputValue()
    for (const remove of [false, true]) {
      await a.page.goto(approval(r.id))
      const field = a.page.locator('input[name=csrf]')
      await field.evaluate((el, [value, gone]) => (gone ? el.remove() : el.setAttribute('value', value)), [foreign, remove] as const)
      await a.page.getByRole('button', { name: 'Approve' }).click()
      await a.page.waitForLoadState()
      expect(await h1(a.page)).toBe('Form not accepted')
      expect(await a.page.locator('.alert').textContent()).toContain(
        'This form has expired or did not come from the page you have open here',
      )
      expect(await status(r.id)).toEqual({ status: 'pending' })
    }
    await a.page.getByRole('link', { name: 'Start again' }).click()
    await a.page.getByRole('button', { name: 'Deny' }).click() // the untouched form still works
    await a.page.waitForLoadState()
    expect(await h1(a.page)).toBe('Denied')
    await a.ctx.close()
    await b.ctx.close()
  })

  it('ignores a wrong return target: after sign-in the person lands on the account page', async () => {
    for (const target of ['https://evil.example/', '//evil.example/', '/\\evil.example/']) {
      const ctx = await browser.newContext()
      const page = await ctx.newPage()
      await page.goto(`${authz.baseUrl}/account/sign-in?return_to=${encodeURIComponent(target)}`)
      expect(await page.locator('.lead').textContent()).toBe('to your account')
      await signInHere(page, 'alice', 'alice-pw')
      expect(page.url()).toBe(`${authz.baseUrl}/account`)
      expect(await h1(page)).toBe('Your account')
      await ctx.close()
    }
  })

  it('shows the same message for an unknown user, a wrong password and a locked account', async () => {
    const r = await start()
    const ctx = await browser.newContext()
    const page = await ctx.newPage()
    await page.goto(approval(r.id))
    const alertAfter = async (username: string, password: string) => {
      await signInHere(page, username, password)
      expect(await page.getByLabel('Username').inputValue()).toBe(username)
      return page.locator('[role=alert]').textContent()
    }
    const unknown = await alertAfter('mallory', 'whatever')
    const wrong = await alertAfter('bob', 'wrong-1')
    await alertAfter('bob', 'wrong-2')
    await alertAfter('bob', 'wrong-3') // LOCKOUT_THRESHOLD=3: locked now
    const locked = await alertAfter('bob', 'bob-pw')
    expect(unknown).toBe('The username or password is incorrect, or this account cannot sign in right now. Check both and try again.')
    expect([wrong, locked]).toEqual([unknown, unknown])
    expect(await sessionCookie(ctx)).toBeUndefined()
    await ctx.close()
  })

  it('lets a flow redirect to a client right after sign-in (the origin joins the form-action CSP)', async () => {
    const ctx = await browser.newContext()
    const { page, errors } = await watchedPage(ctx)
    await page.goto(`${authz.baseUrl}/test/continue`)
    expect(await page.locator('#client-name').textContent()).toBe('Web App')
    await signInHere(page, 'alice', 'alice-pw')
    await page.waitForURL(`${otherOrigin}/cb?user=alice`)
    expect(clientHits).toContain('/cb?user=alice')
    expect(errors).toEqual([])
    await ctx.close()
  })
})
