// The "Connect an app" examples (examples/<library>/) as a reader runs them: each started by its
// package.json start script as a plain Node process (its imports resolved by Node, not by the test
// runner), against one server holding the demo seed plus the example's client.json. Headless
// Chromium signs in through the app as the demo user, sees the user on the app's /, and signs out.
// Only the addresses differ from the printed ones: the test server and each app listen on free
// ports, given to the app as ISSUER and PORT, and client.json's http://localhost:3000 names the
// app's port.
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../src/seed/apply.js'
import { freePort } from '../helpers/free-port.js'
import { approveConsent, signInAs, startAuthz, type Authz } from './authz-server.js'
import { haveChromium, launchChromium, warnIfNoChromium } from './browser.js'

warnIfNoChromium('the app examples browser test')

const LIBRARIES = ['express-openid-connect', 'passport-openidconnect', 'openid-client', 'authjs', 'oidc-client-ts'] as const
type Library = (typeof LIBRARIES)[number]

const demo = JSON.parse(readFileSync('seed/demo.json', 'utf8'))
/** The demo seed's user, as the README's demo credentials give her. */
const ALICE = { username: 'alice', password: 'alice-password' }

interface Example {
  origin: string
  child: ChildProcess
  output: () => string
  exited: Promise<number | null>
}

let authz: Authz
let issuer: string
let browser: Browser
const ports = new Map<Library, number>()
const running: Example[] = []

/** The example's client.json with the printed app address replaced by the port the test chose. */
function clientFile(library: Library): unknown {
  const text = readFileSync(`examples/${library}/client.json`, 'utf8')
  return JSON.parse(text.replaceAll('http://localhost:3000', `http://localhost:${ports.get(library)}`))
}

/** `npm start` without npm: the start script's `node <file>`, run in the example's folder. */
async function startExample(library: Library): Promise<Example> {
  const dir = `examples/${library}`
  const start: string = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8')).scripts.start
  const [command, ...args] = start.split(' ')
  expect(command).toBe('node')
  const port = ports.get(library)!
  const child = spawn(process.execPath, args, {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', ISSUER: issuer, PORT: String(port), AUTH_SECRET: 'a-test-secret-of-at-least-32-characters' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const example = { origin: `http://localhost:${port}`, child, output: () => out, exited }
  running.push(example)
  // Each app says where it listens once it does.
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${library} did not start in time:\n${out}`)), 20_000)
    child.stdout.on('data', () => {
      if (out.includes(` on ${example.origin}\n`)) {
        clearTimeout(timer)
        resolve()
      }
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`${library} exited with ${code} before listening:\n${out}`))
    })
  })
  return example
}

async function stopExample(example: Example): Promise<void> {
  if (example.child.exitCode === null) example.child.kill('SIGTERM')
  await example.exited
}

beforeAll(async () => {
  if (!haveChromium) return
  for (const library of LIBRARIES) ports.set(library, await freePort())
  // authz on localhost too, as the examples have it (localhost:5000 and localhost:3000).
  authz = await startAuthz(demo, { issuerHost: 'localhost' })
  issuer = authz.issuer
  for (const library of LIBRARIES) await applySeed(authz.db, clientFile(library))
  browser = await launchChromium()
})
afterAll(async () => {
  await Promise.all(running.map(stopExample))
  await browser?.close()
  await authz?.close()
})

const text = async (page: Page, selector: string) => (await page.locator(selector).innerText()).trim()

/** Runs one example for the tests inside, in a browser context of its own (no cookies shared). */
function example(library: Library, tests: (get: () => { app: Example; page: Page }) => void) {
  describe.skipIf(!haveChromium)(`examples/${library}`, () => {
    let app: Example
    let context: BrowserContext
    let page: Page
    beforeAll(async () => {
      app = await startExample(library)
      context = await browser.newContext()
      page = await context.newPage()
    })
    afterAll(async () => {
      await context?.close()
      if (app) await stopExample(app)
    })
    tests(() => ({ app, page }))
  })
}

/**
 * Clicks, noting every page the browser is sent to on the way, until a page whose address is
 * `until` (ending in `**`: starts with it) or passes it has loaded. It waits for a new page, never
 * taking the one it clicked on (a sign-out on / comes back to /).
 */
async function navigate(page: Page, click: string, until: string | ((u: URL) => boolean)): Promise<URL[]> {
  const matches =
    typeof until === 'function' ? until : (u: URL) => (until.endsWith('**') ? u.href.startsWith(until.slice(0, -2)) : u.href === until)
  const seen: URL[] = []
  const note = (r: { isNavigationRequest(): boolean; url(): string }) => {
    if (r.isNavigationRequest()) seen.push(new URL(r.url()))
  }
  page.on('request', note)
  try {
    await Promise.all([page.waitForEvent('framenavigated', (f) => f === page.mainFrame() && matches(new URL(f.url()))), page.click(click)])
    await page.waitForLoadState()
  } finally {
    page.off('request', note)
  }
  return seen
}

const onSignInPage = (page: Page) => new URL(page.url()).origin === issuer && new URL(page.url()).pathname === '/account/sign-in'

example('express-openid-connect', (get) => {
  it('signs in through our sign-in and consent pages; / names the user', async () => {
    const { app, page } = get()
    await page.goto(`${app.origin}/`)
    expect(await text(page, 'p')).toBe('Signed out.')
    await navigate(page, 'text="Sign in"', (u) => u.origin === issuer)
    expect(onSignInPage(page)).toBe(true)
    expect(await page.locator('#client-name').textContent()).toBe('Acme Shop')
    await signInAs(page, ALICE, (u) => !u.pathname.startsWith('/account/sign-in'))
    expect(await page.locator('h1').textContent()).toBe('Acme Shop wants to access your account')
    await approveConsent(page, `${app.origin}/`)
    expect(await text(page, '#user')).toBe('Alice Example')
  })

  it('sees the user in the ID token (req.oidc.user) and in our userinfo (fetchUserInfo)', async () => {
    const { app, page } = get()
    await page.goto(`${app.origin}/profile`)
    expect(JSON.parse(await text(page, 'body'))).toEqual({
      user: {
        sub: 'alice-0001',
        name: 'Alice Example',
        email: 'alice@example.com',
        email_verified: true,
        sid: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
        amr: ['pwd'],
        acr: '1',
      },
      userinfo: { sub: 'alice-0001', name: 'Alice Example', email: 'alice@example.com', email_verified: true },
    })
  })

  it('signs out of the app and of authz (end-session with id_token_hint), back at the app', async () => {
    const { app, page } = get()
    await page.goto(`${app.origin}/`)
    const seen = await navigate(page, 'text="Sign out"', `${app.origin}/`)
    expect(await text(page, 'p')).toBe('Signed out.')
    const endSession = seen.find((u) => u.href.startsWith(`${issuer}/connect/endsession?`))!
    expect([...endSession.searchParams.keys()].sort()).toEqual(['client_id', 'id_token_hint', 'post_logout_redirect_uri'])
    expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(app.origin)
    // Our session is over: the protected route asks for the password again.
    await page.goto(`${app.origin}/profile`)
    expect(onSignInPage(page)).toBe(true)
  })
})

example('passport-openidconnect', (get) => {
  it('signs in through our sign-in page without PKCE; / names the user from the ID token', async () => {
    const { app, page } = get()
    await page.goto(`${app.origin}/`)
    expect(await text(page, 'p')).toBe('Signed out.')
    await navigate(page, 'text="Sign in"', (u) => u.origin === issuer)
    expect(onSignInPage(page)).toBe(true)
    const authorize = new URL(new URL(page.url()).searchParams.get('return_to')!, issuer)
    expect(authorize.pathname).toBe('/connect/authorize')
    expect(authorize.searchParams.get('scope')).toBe('openid profile email')
    expect(authorize.searchParams.has('code_challenge')).toBe(false)
    expect(await page.locator('#client-name').textContent()).toBe('Todos')
    await signInAs(page, ALICE, `${app.origin}/`)
    expect(await text(page, 'p')).toBe('Signed in as Alice Example (alice@example.com).')
  })

  it('signs out of the app and of authz, back at the app', async () => {
    const { app, page } = get()
    const seen = await navigate(page, 'text="Sign out"', `${app.origin}/`)
    expect(await text(page, 'p')).toBe('Signed out.')
    const endSession = seen.find((u) => u.href.startsWith(`${issuer}/connect/endsession?`))!
    expect([...endSession.searchParams.keys()].sort()).toEqual(['id_token_hint', 'post_logout_redirect_uri'])
    await navigate(page, 'text="Sign in"', (u) => u.origin === issuer)
    expect(onSignInPage(page)).toBe(true)
  })

  it('registered without requirePkce false, the app is told why: invalid_request, code_challenge is required', async () => {
    const { app, page } = get()
    const client = (clientFile('passport-openidconnect') as { clients: Array<Record<string, unknown>> }).clients[0]!
    await applySeed(authz.db, { clients: [{ ...client, requirePkce: true }] })
    try {
      const back: URL[] = []
      page.on('request', (r) => {
        if (r.isNavigationRequest() && r.url().startsWith(`${app.origin}/cb?`)) back.push(new URL(r.url()))
      })
      const res = await page.goto(`${app.origin}/login`)
      expect(Object.fromEntries(back[0]!.searchParams)).toEqual({
        error: 'invalid_request',
        error_description: 'code_challenge is required (PKCE with S256)',
        state: expect.any(String),
        iss: issuer,
      })
      // passport-openidconnect hands the error to Express, whose default handler answers 500.
      expect(res?.status()).toBe(500)
      expect(await text(page, 'body')).toContain('AuthorizationError: code_challenge is required (PKCE with S256)')
    } finally {
      await applySeed(authz.db, clientFile('passport-openidconnect'))
    }
  })
})

example('openid-client', (get) => {
  it('signs in through our sign-in and consent pages; / names the user from userinfo', async () => {
    const { app, page } = get()
    await page.goto(`${app.origin}/`)
    expect(await text(page, 'p')).toBe('Signed out.')
    await navigate(page, 'text="Sign in"', (u) => u.origin === issuer)
    expect(onSignInPage(page)).toBe(true)
    expect(await page.locator('#client-name').textContent()).toBe('Notes')
    await signInAs(page, ALICE, (u) => !u.pathname.startsWith('/account/sign-in'))
    expect(await page.locator('h1').textContent()).toBe('Notes wants to access your account')
    await approveConsent(page, `${app.origin}/`)
    expect(await text(page, 'p')).toBe('Signed in as Alice Example (alice@example.com).')
  })

  it('signs out of the app and of authz, back at the app', async () => {
    const { app, page } = get()
    const seen = await navigate(page, 'text="Sign out"', `${app.origin}/`)
    expect(await text(page, 'p')).toBe('Signed out.')
    const endSession = seen.find((u) => u.href.startsWith(`${issuer}/connect/endsession?`))!
    expect([...endSession.searchParams.keys()].sort()).toEqual(['client_id', 'id_token_hint', 'post_logout_redirect_uri'])
    await navigate(page, 'text="Sign in"', (u) => u.origin === issuer)
    expect(onSignInPage(page)).toBe(true)
  })
})

example('authjs', (get) => {
  it("signs in from Auth.js's page through ours; the session holds the ID token's claims", async () => {
    const { app, page } = get()
    await page.goto(`${app.origin}/`)
    expect(await text(page, 'p')).toBe('Signed out.')
    await navigate(page, 'text="Sign in"', `${app.origin}/auth/signin**`)
    await navigate(page, 'button:has-text("Sign in with authz")', (u) => u.origin === issuer)
    expect(onSignInPage(page)).toBe(true)
    expect(await page.locator('#client-name').textContent()).toBe('Auth.js app')
    await signInAs(page, ALICE, `${app.origin}/`)
    expect(await text(page, 'p')).toBe('Signed in as Alice Example (alice@example.com).')
    const session = await page.evaluate(async () => (await fetch('/auth/session')).json())
    expect(session).toEqual({ user: { name: 'Alice Example', email: 'alice@example.com' }, expires: expect.any(String) })
  })

  it("signs out of the app on Auth.js's sign-out page", async () => {
    const { app, page } = get()
    await navigate(page, 'text="Sign out"', `${app.origin}/auth/signout`)
    await navigate(page, 'button:has-text("Sign out")', `${app.origin}/`)
    expect(await text(page, 'p')).toBe('Signed out.')
  })
})

example('oidc-client-ts', (get) => {
  it('signs in from the page (a public client with PKCE); the page names the user from userinfo', async () => {
    const { app, page } = get()
    await page.goto(`${app.origin}/`)
    expect(await text(page, '#status')).toBe('Signed out.')
    await navigate(page, '#sign-in', (u) => u.origin === issuer)
    expect(onSignInPage(page)).toBe(true)
    expect(await page.locator('#client-name').textContent()).toBe('My SPA')
    await signInAs(page, ALICE, `${app.origin}/callback?**`)
    await page.waitForURL(`${app.origin}/`)
    expect(await text(page, '#user')).toBe('Alice Example')
  })

  it('signs out: both tokens revoked from the page, our session ended, back at the app', async () => {
    const { app, page } = get()
    // The user as the library keeps it (sessionStorage, one entry per authority and client).
    const refreshToken = await page.evaluate(() => {
      const key = Object.keys(sessionStorage).find((k) => k.startsWith('oidc.user:'))!
      return (JSON.parse(sessionStorage.getItem(key)!) as { refresh_token: string }).refresh_token
    })
    expect(refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const revoked: string[] = []
    page.on('request', (r) => {
      if (r.url() === `${issuer}/connect/revocation`) revoked.push(new URLSearchParams(r.postData() ?? '').get('token_type_hint')!)
    })
    // The page revokes before it leaves, so the click returns while it is still on /.
    const [endSession] = await Promise.all([
      page.waitForRequest((r) => r.url().startsWith(`${issuer}/connect/endsession?`)),
      page.click('#sign-out'),
    ])
    expect(new URL(endSession.url()).searchParams.get('post_logout_redirect_uri')).toBe(`${app.origin}/`)
    expect(new URL(endSession.url()).searchParams.get('id_token_hint')).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/)
    await page.locator('#sign-in').waitFor() // hidden until the page is back, signed out
    expect(page.url()).toBe(`${app.origin}/`)
    expect(await text(page, '#status')).toBe('Signed out.')
    expect(revoked).toEqual(['access_token', 'refresh_token'])
    const refresh = await fetch(`${issuer}/connect/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'spa', refresh_token: refreshToken }),
    })
    expect({ status: refresh.status, error: (await refresh.json()).error }).toEqual({
      status: 400,
      error: 'invalid_grant',
    })
    await navigate(page, '#sign-in', (u) => u.origin === issuer)
    expect(onSignInPage(page)).toBe(true)
  })
})
