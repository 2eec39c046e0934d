// Passkeys in headless Chromium with its virtual authenticator (the DevTools protocol's WebAuthn
// domain: a platform authenticator with resident keys and user verification): a person adds a
// passkey on the account page, signs out, signs in to an app with the passkey alone through the
// authorization code flow (the "Sign in with a passkey" button) and gets an ID token with acr "phr"
// and amr "hwk" and no "pwd"; the same answer posted again, an answer made on another origin and
// one signed by the same key for another relying-party id are refused; the passkey is removed.
// Then a passkey as the second factor: a person adds one, signs out, signs in with the password to
// a requireMfa client, is asked for the passkey (and only theirs: another person's is refused),
// and the ID token says acr "phr" and amr pwd, hwk (or swk), mfa.
// With SCREENSHOT_DIR set, the pages are saved at desktop (1280 px) and phone (390 px) widths.
import { createHash, createPrivateKey, randomBytes, sign } from 'node:crypto'
import { decodeJwt } from 'jose'
import type { APIRequestContext, Browser, BrowserContext, CDPSession, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPageScripts } from '../../src/pages/scripts.js'
import { ALICE, signInAs, startAuthz, type Authz } from './authz-server.js'
import { haveChromium, launchChromium, warnIfNoChromium, saveScreenshots } from './browser.js'
import { startSite, type Site } from './site.js'

warnIfNoChromium('the passkey browser test')

const CAROL = { subjectId: 'carol-1', username: 'carol', password: 'carol-pw', claims: {} }
const DAVE = { subjectId: 'dave-1', username: 'dave', password: 'dave-pw', claims: {} }

let authz: Authz
let browser: Browser
let rp: Site

beforeAll(async () => {
  if (!haveChromium) return
  rp = await startSite((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end('<!doctype html><title>Client</title><h1>Client</h1>')
  })
  // WebAuthn needs a host name for its relying-party id: the issuer is http://localhost:<port>.
  authz = await startAuthz(
    {
      identityResources: ['openid', 'profile'],
      clients: [
        {
          clientId: 'shop',
          clientName: 'Acme Shop',
          secrets: [{ value: 'shop-secret' }],
          allowedGrantTypes: ['authorization_code'],
          allowedScopes: ['openid', 'profile'],
          requireConsent: false,
          redirectUris: [`${rp.origin}/cb`],
        },
        {
          clientId: 'strict',
          clientName: 'Strict app',
          secrets: [{ value: 'strict-secret' }],
          allowedGrantTypes: ['authorization_code'],
          allowedScopes: ['openid'],
          requireConsent: false,
          requireMfa: true,
          redirectUris: [`${rp.origin}/cb`],
        },
      ],
      users: [ALICE, CAROL, DAVE],
    },
    { issuerHost: 'localhost', env: { PASSKEYS: 'true' } },
  )
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await authz?.close()
  await rp?.close()
})

/** Saves the page at both widths, the whole page (SCREENSHOT_DIR). */
const shot = (page: Page, name: string) => saveScreenshots(page, name)

/** A platform authenticator with resident keys and user verification, in this page's tab. */
async function addAuthenticator(context: BrowserContext, page: Page): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  })
  return { cdp, authenticatorId }
}

/**
 * An assertion (WebAuthn §6.1, §7.2) signed with the authenticator's own private key, for any
 * relying-party id and origin: what a phishing site's page would get from an authenticator that
 * ignored the browser's checks. authenticatorData is the RP id's hash, the flags (UP and UV) and
 * the counter; the signature (EdDSA or ES256, as the key is) is over it and the hash of clientDataJSON.
 */
function forgedAssertion(
  credential: { credentialId: string; privateKey: string; userHandle?: string; signCount: number },
  o: { rpId: string; origin: string; challenge: string },
): string {
  const authData = Buffer.alloc(37)
  createHash('sha256').update(o.rpId).digest().copy(authData, 0)
  authData[32] = 0x05
  authData.writeUInt32BE(credential.signCount + 1000, 33)
  const clientData = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: o.challenge, origin: o.origin, crossOrigin: false }))
  const key = createPrivateKey({ key: Buffer.from(credential.privateKey, 'base64'), format: 'der', type: 'pkcs8' })
  // Ed25519 (EdDSA, COSE -8) hashes inside the algorithm; ES256 signs a SHA-256 digest.
  const signature = sign(
    key.asymmetricKeyType === 'ed25519' ? null : 'sha256',
    Buffer.concat([authData, createHash('sha256').update(clientData).digest()]),
    key,
  )
  const id = Buffer.from(credential.credentialId, 'base64').toString('base64url')
  return JSON.stringify({
    id,
    rawId: id,
    type: 'public-key',
    clientExtensionResults: {},
    response: {
      authenticatorData: authData.toString('base64url'),
      clientDataJSON: clientData.toString('base64url'),
      signature: signature.toString('base64url'),
      ...(credential.userHandle ? { userHandle: Buffer.from(credential.userHandle, 'base64').toString('base64url') } : {}),
    },
  })
}

/**
 * Makes the page's browser look like one without passkey autofill, so the sign-in page's button
 * starts the ceremony, until the page's origin stores autofill=on.
 */
const NO_AUTOFILL = `try {
  if (localStorage.getItem('autofill') !== 'on')
    Object.defineProperty(PublicKeyCredential, 'isConditionalMediationAvailable', { value: () => Promise.resolve(false) })
} catch {}`

const unescapeAttr = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')

/** The passkey page's form as this browser gets it: its CSRF token and the WebAuthn options. */
async function passkeyPage(request: APIRequestContext) {
  const res = await request.get(`${authz.issuer}/account/sign-in/passkey`)
  const body = await res.text()
  return {
    csrf: /name="csrf" value="([^"]+)"/.exec(body)![1]!,
    options: JSON.parse(unescapeAttr(/data-options="([^"]+)"/.exec(body)![1]!)) as Record<string, unknown>,
  }
}

describe.skipIf(!haveChromium)('passkeys in Chromium', () => {
  let context: BrowserContext
  afterAll(async () => context?.close())

  it('adds a passkey, signs in with it alone (acr phr), refuses replays and other origins, removes it', async () => {
    context = await browser.newContext()
    const page = await context.newPage()
    await page.addInitScript(NO_AUTOFILL)
    const { cdp, authenticatorId } = await addAuthenticator(context, page)

    // Signed in with the password, the person adds a passkey on the account page.
    await page.goto(`${authz.issuer}/account`)
    await signInAs(page, ALICE, `${authz.issuer}/account`)
    expect(await page.locator('#passkeys .empty').textContent()).toBe('You have no passkeys yet.')
    await shot(page, 'passkeys-account-empty')
    await page.getByLabel('Name of the new passkey (optional)').fill('Work laptop')
    await page.getByRole('button', { name: 'Add a passkey' }).click()
    await page.locator('[role=status]').waitFor()
    expect(await page.locator('[role=status]').textContent()).toBe('The passkey “Work laptop” has been added. You can sign in with it now.')
    expect(await page.locator('#passkeys .item-title').allTextContents()).toEqual(['Work laptop'])
    expect(await page.locator('#passkeys .item .item-text').textContent()).toBe('On one device only')
    await shot(page, 'passkeys-account')
    const { rows } = await authz.db.query<{ subject_id: string; counter: string; backup_eligible: boolean; transports: string[] }>(
      'SELECT subject_id, counter, backup_eligible, transports FROM passkeys',
    )
    expect(rows).toEqual([{ subject_id: ALICE.subjectId, counter: expect.anything(), backup_eligible: false, transports: ['internal'] }])

    // The sign-in page as a browser without a passkey sees it: the passkey button beside the password form.
    const bare = await browser.newContext()
    const look = await bare.newPage()
    await look.goto(`${authz.issuer}/account/sign-in`)
    expect(await look.locator('#username').getAttribute('autocomplete')).toBe('username webauthn')
    await look.getByRole('button', { name: 'Sign in with a passkey' }).waitFor()
    await shot(look, 'passkeys-sign-in')
    await bare.close()

    // Signed out, the person signs in to the app with the passkey alone: no username, no password.
    await page.getByRole('button', { name: 'Sign out' }).last().click()
    await page.locator('h1', { hasText: 'You are signed out' }).waitFor()
    const verifier = randomBytes(32).toString('base64url')
    const authorize = new URL(`${authz.issuer}/connect/authorize`)
    authorize.search = new URLSearchParams({
      client_id: 'shop',
      redirect_uri: `${rp.origin}/cb`,
      response_type: 'code',
      scope: 'openid profile',
      state: 'st',
      nonce: 'n-1',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString()
    let posted: string | undefined
    page.on('request', (r) => {
      if (r.method() === 'POST' && new URL(r.url()).pathname === '/account/sign-in/passkey') posted = r.postData() ?? undefined
    })
    // The person presses the sign-in page's passkey button; the authenticator answers at once.
    await page.goto(authorize.href)
    await Promise.all([
      page.waitForURL((u) => u.origin === rp.origin && u.pathname === '/cb'),
      page.getByRole('button', { name: 'Sign in with a passkey' }).click(),
    ])
    const code = new URL(page.url()).searchParams.get('code')!
    const res = await fetch(`${authz.issuer}/connect/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from('shop:shop-secret').toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: `${rp.origin}/cb` }),
    })
    expect(res.status).toBe(200)
    const idToken = decodeJwt(String(((await res.json()) as Record<string, unknown>).id_token))
    expect(idToken).toMatchObject({ sub: ALICE.subjectId, acr: 'phr', amr: ['hwk', 'user', 'mfa'], nonce: 'n-1' })
    expect(idToken.amr).not.toContain('pwd')
    const used = await authz.db.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM passkeys')
    expect(used.rows[0]!.last_used_at).not.toBeNull()

    // The same answer posted again (with a fresh form token): its challenge was used, no session.
    expect(posted).toBeDefined()
    const again = new URLSearchParams(posted)
    again.set('csrf', (await passkeyPage(context.request)).csrf)
    const replay = await context.request.post(`${authz.issuer}/account/sign-in/passkey`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      data: again.toString(),
    })
    expect(replay.status()).toBe(400)
    expect(await replay.text()).toContain('The sign-in took too long or was used already. Try again.')
    expect(replay.headers()['set-cookie'] ?? '').not.toContain('authz-session=')

    // An answer made on another origin (the app's, also on localhost) for our challenge: refused.
    // The same tab, whose authenticator holds the passkey.
    const form = await passkeyPage(context.request)
    await page.goto(`${rp.origin}/`)
    await page.addScriptTag({ content: createPageScripts().passkeys[0]!.js })
    const foreign = await page.evaluate(async (optionsJSON) => {
      const lib = (window as unknown as { SimpleWebAuthnBrowser: { startAuthentication(o: unknown): Promise<unknown> } })
        .SimpleWebAuthnBrowser
      return JSON.stringify(await lib.startAuthentication({ optionsJSON }))
    }, form.options)
    expect(JSON.parse(Buffer.from(JSON.parse(foreign).response.clientDataJSON, 'base64url').toString()).origin).toBe(rp.origin)
    const refused = await context.request.post(`${authz.issuer}/account/sign-in/passkey`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      data: new URLSearchParams({ csrf: form.csrf, webauthn_response: foreign }).toString(),
    })
    expect(refused.status()).toBe(401)
    expect(await refused.text()).toContain('That passkey could not be used to sign in.')
    expect(refused.headers()['set-cookie'] ?? '').not.toContain('authz-session=')

    // The same key signing for another relying-party id (and for our origin, and for the other
    // site's): refused too. A control signed for our own RP id and origin is accepted, so the
    // refusals are the RP id's and the origin's, not a forgery's flaw.
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
    expect(credentials).toHaveLength(1)
    const passkeyAnswer = async (rpId: string, origin: string) => {
      const f = await passkeyPage(context.request)
      const answer = forgedAssertion(credentials[0]!, { rpId, origin, challenge: String(f.options.challenge) })
      return context.request.post(`${authz.issuer}/account/sign-in/passkey`, {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        data: new URLSearchParams({ csrf: f.csrf, webauthn_response: answer }).toString(),
        maxRedirects: 0,
      })
    }
    for (const [rpId, origin] of [
      ['evil.example', authz.issuer],
      ['evil.example', 'https://evil.example'],
      ['localhost', 'https://evil.example'],
    ] as const) {
      const res = await passkeyAnswer(rpId, origin)
      expect(res.status(), `${rpId} ${origin}`).toBe(401)
      expect(await res.text()).toContain('That passkey could not be used to sign in.')
    }

    // Signed out again, the person uses the button on the passkey page: back on the account page.
    await page.goto(`${authz.issuer}/account/sign-out`)
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.locator('h1', { hasText: 'You are signed out' }).waitFor()
    await page.goto(`${authz.issuer}/account/sign-in/passkey`)
    expect(await page.locator('h1').textContent()).toBe('Sign in with a passkey')
    expect(await page.locator('[role=alert]:visible').count()).toBe(0)
    await shot(page, 'passkeys-page')
    await Promise.all([page.waitForURL(`${authz.issuer}/account`), page.getByRole('button', { name: 'Sign in with a passkey' }).click()])

    // The account page: the passkey's last use shows.
    expect(await page.locator('#passkeys .meta').textContent()).toMatch(/^Added .+ · Last used .+ UTC$/)

    // In a browser with passkey autofill (conditional mediation), the sign-in page offers the
    // passkey in the username field's suggestions: the authenticator answers as a person picking it.
    await page.evaluate(() => localStorage.setItem('autofill', 'on'))
    await page.goto(`${authz.issuer}/account/sign-out`)
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.locator('h1', { hasText: 'You are signed out' }).waitFor()
    await Promise.all([page.waitForURL((u) => u.origin === rp.origin && u.pathname === '/cb'), page.goto(authorize.href)])
    await page.goto(`${authz.issuer}/account`)
    expect(await page.locator('h1').textContent()).toBe('Your account')

    // The control: the same forged answer for our own RP id and origin is accepted.
    const control = await passkeyAnswer('localhost', authz.issuer)
    expect(control.status()).toBe(303)
    expect(control.headers()['set-cookie']).toContain('authz-session=')
    await page.reload()

    // It is removed.
    await page.getByRole('button', { name: 'Remove the passkey Work laptop' }).click()
    await page.locator('[role=status]').waitFor()
    expect(await page.locator('[role=status]').textContent()).toBe('The passkey “Work laptop” has been removed.')
    expect(await page.locator('#passkeys .empty').textContent()).toBe('You have no passkeys yet.')
    expect((await authz.db.query('SELECT 1 FROM passkeys')).rows).toEqual([])
  }, 60_000)

  it("asks for the passkey after the password for a requireMfa client, refuses another person's, then gives acr phr", async () => {
    // Dave adds a passkey in his own browser: the one that must not pass carol's step.
    const daveContext = await browser.newContext()
    const davePage = await daveContext.newPage()
    const dave = await addAuthenticator(daveContext, davePage)
    await davePage.goto(`${authz.issuer}/account`)
    await signInAs(davePage, DAVE, `${authz.issuer}/account`)
    await davePage.getByRole('button', { name: 'Add a passkey' }).click()
    await davePage.locator('[role=status]').waitFor()
    const daveCredential = (await dave.cdp.send('WebAuthn.getCredentials', { authenticatorId: dave.authenticatorId })).credentials[0]!
    await daveContext.close()

    // Carol adds one on her account page, and signs out.
    const carolContext = await browser.newContext()
    const page = await carolContext.newPage()
    await page.addInitScript(NO_AUTOFILL)
    await addAuthenticator(carolContext, page)
    await page.goto(`${authz.issuer}/account`)
    await signInAs(page, CAROL, `${authz.issuer}/account`)
    await page.getByLabel('Name of the new passkey (optional)').fill('Phone')
    await page.getByRole('button', { name: 'Add a passkey' }).click()
    await page.locator('[role=status]').waitFor()
    expect(await page.locator('#passkeys .item-title').allTextContents()).toEqual(['Phone'])
    await page.getByRole('button', { name: 'Sign out' }).last().click()
    await page.locator('h1', { hasText: 'You are signed out' }).waitFor()

    // The app requires a second factor: after the password, the passkey step (her only factor).
    const verifier = randomBytes(32).toString('base64url')
    const authorize = new URL(`${authz.issuer}/connect/authorize`)
    authorize.search = new URLSearchParams({
      client_id: 'strict',
      redirect_uri: `${rp.origin}/cb`,
      response_type: 'code',
      scope: 'openid',
      state: 'st',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString()
    await page.goto(authorize.href)
    await signInAs(page, CAROL, (u) => u.pathname === '/account/sign-in/code')
    expect(await page.locator('h1').textContent()).toBe('Two-step verification')
    expect(await page.locator('.lead').textContent()).toBe('Use your passkey to finish signing in as carol.')
    await page.getByRole('button', { name: 'Use your passkey' }).waitFor()
    expect(await page.getByLabel('One-time code').count()).toBe(0)
    await shot(page, 'passkey-second-factor')

    // Dave's passkey, signed for this site and this page's challenge, posted from carol's page: refused.
    const options = JSON.parse((await page.locator('form[data-passkey]').getAttribute('data-options'))!) as { challenge: string }
    const foreign = forgedAssertion(daveCredential, { rpId: 'localhost', origin: authz.issuer, challenge: options.challenge })
    await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/account/sign-in/code'),
      page.evaluate((answer) => {
        const form = document.querySelector<HTMLFormElement>('form[data-passkey]')!
        form.querySelector<HTMLInputElement>('input[name=webauthn_response]')!.value = answer
        form.submit()
      }, foreign),
    ])
    await page.locator('[role=alert]:visible').waitFor()
    expect(await page.locator('[role=alert]:visible').textContent()).toBe(
      'That passkey does not belong to carol. Use a passkey you added to this account.',
    )
    expect(new URL(page.url()).pathname).toBe('/account/sign-in/code')
    const refused = await authz.db.query<{ failures: number }>(
      `SELECT failures FROM failure_counters WHERE kind = 'user' AND name = $1 AND source = ''`,
      [CAROL.subjectId],
    )
    expect(refused.rows).toEqual([{ failures: 1 }])
    await shot(page, 'passkey-second-factor-refused')

    // Her own passkey: the authenticator answers at once, and she is back at the app.
    await Promise.all([
      page.waitForURL((u) => u.origin === rp.origin && u.pathname === '/cb'),
      page.getByRole('button', { name: 'Use your passkey' }).click(),
    ])
    const code = new URL(page.url()).searchParams.get('code')!
    const res = await fetch(`${authz.issuer}/connect/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from('strict:strict-secret').toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: `${rp.origin}/cb` }),
    })
    expect(res.status).toBe(200)
    const idToken = decodeJwt(String(((await res.json()) as Record<string, unknown>).id_token))
    expect(idToken).toMatchObject({ sub: CAROL.subjectId, acr: 'phr' })
    expect(idToken.amr).toEqual(expect.arrayContaining(['pwd', 'mfa']))
    expect(idToken.amr).toEqual(expect.arrayContaining([expect.stringMatching(/^(hwk|swk)$/)]))
    // A success forgets the failure.
    const after = await authz.db.query(`SELECT 1 FROM failure_counters WHERE kind = 'user' AND name = $1 AND source = ''`, [
      CAROL.subjectId,
    ])
    expect(after.rows).toEqual([])
    await carolContext.close()
  }, 60_000)
})
