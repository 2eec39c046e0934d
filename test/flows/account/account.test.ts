// The account page over HTTP, as a browser without JavaScript uses it: what a person sees (the
// apps that can reach their account, their sessions, their password), and each thing they can do
// there, with what it leaves stored: an app's access withdrawn (consent gone, its tokens inactive),
// another session signed out (with its back-channel logout queued), the password changed (checked
// and counted like a sign-in, audited, other sessions ended). Every form is refused without its
// CSRF token or from another origin. All of it in the person's language (Accept-Language).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FORM, form, type TestApp } from '../../helpers/app.js'
import { csrfIn, postForm, postFormBasic, withCookies } from '../../helpers/http.js'
import { signInWithForm } from '../../helpers/sign-in.js'
import { TEST_PASSWORD_HASH_COST } from '../../helpers/password-cost.js'
import { authorizeUrl, codeFor, consent, createAuthorizeTestApp, located, pkcePair, redeem, SPA_CB } from '../authorization-code/harness.js'

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0'
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'

let authz: TestApp
beforeAll(async () => {
  authz = await createAuthorizeTestApp({ LOCKOUT_THRESHOLD: '3' })
  await authz.db.query(`UPDATE clients SET back_channel_logout_uri = 'https://web.example/bc-logout' WHERE client_id = 'web'`)
  await authz.db.query(
    `INSERT INTO users (subject_id, username, password_hash, enabled, claims) SELECT 'u-' || n, n, password_hash, true, '{}'::jsonb
       FROM users, unnest(ARRAY['carol', 'dave', 'erin', 'gina']) AS n WHERE username = 'bob'`,
  ) // carol, dave, erin and gina: bob's password
})
afterAll(() => authz?.close())

/** Signs `username` in through the sign-in page, with a User-Agent; the session's cookies. */
async function signIn(username: string, password: string, userAgent?: string): Promise<string> {
  const ua = userAgent ? { 'user-agent': userAgent } : {}
  const page = await authz.app.inject({ method: 'GET', url: '/account/sign-in', headers: ua })
  const jar = withCookies('', page.headers['set-cookie'])
  const res = await authz.app.inject({
    method: 'POST',
    url: '/account/sign-in',
    headers: { ...FORM, ...ua, cookie: jar },
    payload: form({ csrf: csrfIn(page.body), username, password }),
  })
  expect(res.statusCode).toBe(303)
  return withCookies(jar, res.headers['set-cookie'])
}

const get = (url: string, cookie: string) => authz.app.inject({ method: 'GET', url, headers: { cookie } })

/** Posts `fields` from the page at `url` (its CSRF token and cookies), the way its form does. */
async function submit(url: string, cookie: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const page = await get(url, cookie)
  expect(page.statusCode).toBe(200)
  const jar = withCookies(cookie, page.headers['set-cookie'])
  return authz.app.inject({
    method: 'POST',
    url,
    headers: { ...FORM, ...headers, cookie: jar },
    payload: form({ csrf: csrfIn(page.body), ...fields }),
  })
}

const introspect = async (token: string) =>
  (await postFormBasic(authz.app, '/connect/introspect', { token }, 'orders-api', 'api-secret')).json<{ active: boolean }>()

/** The `web` app's tokens for `cookie`'s person: consent given and remembered, a refresh token issued. */
async function webTokens(cookie: string) {
  const { verifier, challenge } = pkcePair()
  const url = authorizeUrl({ scope: 'openid profile orders.read offline_access' }, challenge)
  let res = await get(url, cookie)
  if (res.statusCode === 200) res = await consent(authz, url, cookie, 'approve', true)
  expect(res.statusCode).toBe(303)
  const code = located(res).searchParams.get('code')!
  const tokens = await redeem(authz, { code, code_verifier: verifier })
  expect(tokens.statusCode).toBe(200)
  return tokens.json<{ access_token: string; refresh_token: string }>()
}

const audit = (event: string) =>
  authz.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.log === 'audit' && l.event === event)

/** Text of the page without tags, spaces collapsed. */
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()

describe('the account page', () => {
  it('sends a person who is not signed in to sign in, and back (to the password page too)', async () => {
    const res = await get('/account', '')
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/account/sign-in?return_to=%2Faccount')
    const pw = await get('/account/password', '')
    expect(pw.statusCode).toBe(303)
    expect(pw.headers.location).toBe('/account/sign-in?return_to=%2Faccount%2Fpassword')
    const { res: signedIn } = await signInWithForm(authz.app, { location: String(pw.headers.location) }, 'alice', 'alice-pw')
    expect(signedIn.headers.location).toBe('/account/password')
  })

  it('lists the apps with what they may do and since when, and the sessions with their device and last use', async () => {
    const T = Date.UTC(2027, 0, 15, 9, 30)
    authz.clock.set(T)
    const phone = await signIn('alice', 'alice-pw', IPHONE)
    await webTokens(phone)
    const { code, verifier } = await codeFor(authz, phone, { scope: 'openid offline_access' }, 'spa')
    const spa = await postForm(authz.app, '/connect/token', {
      grant_type: 'authorization_code',
      client_id: 'spa',
      redirect_uri: SPA_CB,
      code,
      code_verifier: verifier,
    })
    expect(spa.statusCode).toBe(200)
    authz.clock.set(T + 600_000)
    const laptop = await signIn('alice', 'alice-pw', FIREFOX)
    const page = await get('/account', laptop)
    expect(page.statusCode).toBe(200)
    expect(page.headers['cache-control']).toBe('no-store')
    const body = text(page.body)
    expect(body).toContain('Your account Signed in as alice · Alice Example')
    expect(body).toContain(
      'Apps with access to your account These apps can use your account. Removing an app signs it out and it will have to ask you again. ' +
        'Single-page app Signed in since 15 Jan 2027 Signed in with your account Remove access ' +
        'Web &lt;App&gt; Allowed 15 Jan 2027 Sign you in · Your profile · Read your orders · Stay signed in Remove access',
    )
    expect(page.body).toContain('aria-label="Remove access for Web &lt;App&gt;"')
    expect(body).toContain(
      'Where you are signed in Sign out of any session you do not recognise, then change your password. ' +
        'Firefox on Linux This device Active now Signed in 15 Jan 2027, 09:40 UTC ' +
        'Safari on iOS Last active 15 Jan 2027, 09:30 UTC Signed in 15 Jan 2027, 09:30 UTC Sign out ' +
        'Sign out of all other sessions',
    )
    expect(body).toContain('Password Changing your password signs you out everywhere else. Change password')
    expect(page.body).toContain('<a class="button secondary small" href="/account/password">Change password</a>')
  })

  it('says so when no app has access', async () => {
    const cookie = await signIn('dave', 'bob-pw')
    expect(text((await get('/account', cookie)).body)).toContain('Apps with access to your account No app has access to your account.')
  })
})

describe("in the person's language", () => {
  const GERMAN = { 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' }
  const getIn = (url: string, cookie: string, headers: Record<string, string>) =>
    authz.app.inject({ method: 'GET', url, headers: { ...headers, cookie } })

  it('speaks German for Accept-Language: de, dates written as German writes them', async () => {
    const T = Date.UTC(2027, 2, 3, 14, 5)
    authz.clock.set(T)
    const phone = await signIn('gina', 'bob-pw', IPHONE)
    await webTokens(phone)
    authz.clock.set(T + 600_000)
    const laptop = await signIn('gina', 'bob-pw', FIREFOX)
    const page = await getIn('/account', laptop, GERMAN)
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-language']).toBe('de')
    expect(page.body).toContain('<html lang="de">')
    expect(page.body).toContain('<title>Ihr Konto · ')
    expect(page.body).toContain('<h1>Ihr Konto</h1>')
    const body = text(page.body)
    expect(body).toContain('Ihr Konto Angemeldet als gina')
    expect(body).toContain(
      'Anwendungen mit Zugriff auf Ihr Konto Diese Anwendungen können Ihr Konto nutzen. ' +
        'Wenn Sie eine entfernen, wird sie abgemeldet und muss Sie erneut um Erlaubnis fragen. ' +
        'Web &lt;App&gt; Erlaubt am 03.03.2027 Ihre Anmeldung · Ihr Profil · Read your orders · Angemeldet bleiben Zugriff entfernen',
    )
    expect(page.body).toContain('aria-label="Zugriff für Web &lt;App&gt; entfernen">Zugriff entfernen</button>')
    expect(body).toContain(
      'Wo Sie angemeldet sind Melden Sie jede Sitzung ab, die Sie nicht kennen, und ändern Sie dann Ihr Passwort. ' +
        'Firefox unter Linux Dieses Gerät Jetzt aktiv Angemeldet am 03.03.2027, 14:15 UTC ' +
        'Safari unter iOS Zuletzt aktiv am 03.03.2027, 14:05 UTC Angemeldet am 03.03.2027, 14:05 UTC Abmelden ' +
        'Alle anderen Sitzungen abmelden',
    )
    expect(page.body).toContain('aria-label="Safari unter iOS abmelden">Abmelden</button>')
    expect(body).toContain('Passwort Wenn Sie Ihr Passwort ändern, werden Sie überall sonst abgemeldet. Passwort ändern')

    // What a form did is said in German too, and the password page is German.
    const ended = await submit('/account', laptop, { action: 'end-other-sessions' }, GERMAN)
    expect(ended.statusCode).toBe(200)
    expect(ended.body).toContain('<div class="success" role="status"><p>Eine andere Sitzung wurde abgemeldet.</p></div>')
    const refused = await submit(
      '/account/password',
      laptop,
      { current_password: 'bob-pw', new_password: 'short', confirm_password: 'short' },
      GERMAN,
    )
    expect(refused.statusCode).toBe(400)
    expect(refused.body).toContain('<h1>Ihr Passwort ändern</h1>')
    expect(refused.body).toContain('<div class="alert" role="alert"><p>Das neue Passwort muss mindestens 8 Zeichen haben.</p></div>')
  })

  it('speaks English without Accept-Language, and for a language it does not speak', async () => {
    const cookie = await signIn('gina', 'bob-pw')
    for (const headers of [{}, { 'accept-language': 'fr-FR, ja;q=0.5' }] as Array<Record<string, string>>) {
      const page = await getIn('/account', cookie, headers)
      expect(page.headers['content-language']).toBe('en')
      expect(page.body).toContain('<html lang="en">')
      expect(page.body).toContain('<h1>Your account</h1>')
      expect(text(page.body)).toContain('Web &lt;App&gt; Allowed 3 Mar 2027')
    }
  })
})

describe('removing an app', () => {
  it("forgets the consent and revokes the tokens issued under it; the other apps' tokens stay", async () => {
    await authz.db.query(`DELETE FROM persisted_grants WHERE subject_id = 'u-alice'`)
    await authz.db.query(`DELETE FROM consents WHERE subject_id = 'u-alice'`)
    const cookie = await signIn('alice', 'alice-pw')
    const web = await webTokens(cookie)
    const { code, verifier } = await codeFor(authz, cookie, { scope: 'openid orders.read offline_access' }, 'spa')
    const spa = (
      await postForm(authz.app, '/connect/token', {
        grant_type: 'authorization_code',
        client_id: 'spa',
        redirect_uri: SPA_CB,
        code,
        code_verifier: verifier,
      })
    ).json<{ access_token: string }>()
    expect(await introspect(web.access_token)).toMatchObject({ active: true })

    const res = await submit('/account', cookie, { action: 'revoke-app', client_id: 'web' })
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain(
      '<div class="success" role="status"><p>Web &lt;App&gt; no longer has access to your account. It has been signed out.</p></div>',
    )
    expect(res.body).not.toContain('data-client-id="web"')
    expect(res.body).toContain('data-client-id="spa"')
    const { rows } = await authz.db.query(`SELECT client_id FROM consents WHERE subject_id = 'u-alice'`)
    expect(rows).toEqual([])
    expect(await introspect(web.access_token)).toEqual({ active: false })
    const refresh = await postFormBasic(
      authz.app,
      '/connect/token',
      { grant_type: 'refresh_token', refresh_token: web.refresh_token },
      'web',
      'web-secret',
    )
    expect(refresh.statusCode).toBe(400)
    expect(refresh.json()).toMatchObject({ error: 'invalid_grant' })
    expect(await introspect(spa.access_token)).toMatchObject({ active: true })
    expect(audit('account.app_revoked').at(-1)).toMatchObject({ subject: 'u-alice', client_id: 'web', families: 1, outcome: 'success' })

    // The next authorization asks again.
    const again = await get(
      `/connect/authorize?${new URLSearchParams({ client_id: 'web', redirect_uri: 'https://web.example/cb', response_type: 'code', scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })}`,
      cookie,
    )
    expect(again.statusCode).toBe(200)
    expect(again.body).toContain('wants to access your account')
  })

  it('answers 404 for an app that has no access, and changes nothing of another person', async () => {
    const bob = await signIn('bob', 'bob-pw')
    await webTokens(bob)
    const alice = await signIn('alice', 'alice-pw')
    const res = await submit('/account', alice, { action: 'revoke-app', client_id: 'nopkce' })
    expect(res.statusCode).toBe(404)
    expect(res.body).toContain('<div class="alert" role="alert"><p>That app has no access to your account.</p></div>')
    const { rows } = await authz.db.query(`SELECT client_id FROM consents WHERE subject_id = 'u-bob'`)
    expect(rows).toEqual([{ client_id: 'web' }])
  })
})

describe('sessions', () => {
  it("signs out another session (its back-channel logout queued), never the current one by sid, never another person's", async () => {
    const other = await signIn('erin', 'bob-pw', IPHONE)
    await webTokens(other) // web is used in that session: its back-channel logout is due when it ends
    authz.clock.advance(1000)
    const here = await signIn('erin', 'bob-pw', FIREFOX)
    const bob = await signIn('bob', 'bob-pw')
    const sids = await authz.db.query<{ sid: string; user_agent: string | null }>(
      `SELECT sid, user_agent FROM user_sessions WHERE subject_id = 'u-erin' ORDER BY last_used_at`,
    )
    expect(sids.rows.map((r) => r.user_agent)).toEqual([IPHONE, FIREFOX])
    const [otherSid, hereSid] = sids.rows.map((r) => r.sid) as [string, string]
    const bobSid = (await authz.db.query<{ sid: string }>(`SELECT sid FROM user_sessions WHERE subject_id = 'u-bob'`)).rows[0]!.sid

    expect((await submit('/account', here, { action: 'end-session', sid: bobSid })).statusCode).toBe(404)
    expect((await get('/account', bob)).statusCode).toBe(200)
    const self = await submit('/account', here, { action: 'end-session', sid: hereSid })
    expect(self.statusCode).toBe(404)
    expect(self.body).toContain('That session has already ended.')

    const res = await submit('/account', here, { action: 'end-session', sid: otherSid })
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('<p>That session has been signed out.</p>')
    expect(res.body).not.toContain(`data-sid="${otherSid}"`)
    expect((await get('/account', other)).statusCode).toBe(303)
    expect((await get('/account', here)).statusCode).toBe(200)
    const queued = await authz.db.query(`SELECT client_id, sid, reason FROM backchannel_logouts WHERE subject_id = 'u-erin'`)
    expect(queued.rows).toEqual([{ client_id: 'web', sid: otherSid, reason: 'logout' }])
    expect(audit('account.session_ended').at(-1)).toMatchObject({ subject: 'u-erin', sid: otherSid, sessions: 1 })
  })

  it('signs out of every other session at once', async () => {
    const a = await signIn('carol', 'bob-pw')
    const b = await signIn('carol', 'bob-pw')
    const here = await signIn('carol', 'bob-pw')
    const res = await submit('/account', here, { action: 'end-other-sessions' })
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('<p>2 other sessions have been signed out.</p>')
    expect(text(res.body)).not.toContain('Sign out of all other sessions')
    expect((await get('/account', a)).statusCode).toBe(303)
    expect((await get('/account', b)).statusCode).toBe(303)
    expect((await get('/account', here)).statusCode).toBe(200)
  })

  it('answers 400 to a form that names no known action', async () => {
    const here = await signIn('carol', 'bob-pw')
    const res = await submit('/account', here, { action: 'delete-everything' })
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('That did not work. Please try again.')
  })
})

describe('changing the password', () => {
  const change = (cookie: string, current: string, next: string, confirm = next) =>
    submit('/account/password', cookie, { current_password: current, new_password: next, confirm_password: confirm })

  it('changes it with the current one, ends the other sessions (back-channel logouts queued) and audits it', async () => {
    await authz.db.query(`INSERT INTO users (subject_id, username, password_hash, enabled, claims)
      SELECT 'u-frank', 'frank', password_hash, true, '{}'::jsonb FROM users WHERE username = 'bob'`)
    const other = await signIn('frank', 'bob-pw')
    await webTokens(other)
    const here = await signIn('frank', 'bob-pw')
    const page = await get('/account/password', here)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain(
      '<input id="current_password" name="current_password" type="password" autocomplete="current-password" required autofocus>',
    )
    expect(page.body).toContain('autocomplete="new-password" minlength="8" required aria-describedby="new-password-hint">')

    const res = await change(here, 'bob-pw', 'a new passphrase')
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('<h1>Password changed</h1>')
    expect(res.body).toContain(
      '<p>Your password has been changed. Use it the next time you sign in.</p><p>One other session has been signed out.</p>',
    )
    expect((await get('/account', other)).statusCode).toBe(303)
    expect((await get('/account', here)).statusCode).toBe(200)
    const { rows } = await authz.db.query<{ password_hash: string }>(`SELECT password_hash FROM users WHERE username = 'frank'`)
    // Hashed at the process's cost (the suite's, test/helpers/password-cost.ts), never stored as typed.
    expect(rows[0]!.password_hash).toMatch(
      new RegExp(`^scrypt\\$${2 ** TEST_PASSWORD_HASH_COST}\\$8\\$1\\$[A-Za-z0-9_-]{22}\\$[A-Za-z0-9_-]{43}$`),
    )
    const queued = await authz.db.query(`SELECT client_id, reason FROM backchannel_logouts WHERE subject_id = 'u-frank'`)
    expect(queued.rows).toEqual([{ client_id: 'web', reason: 'password' }])
    expect(audit('account.password_changed').at(-1)).toMatchObject({
      subject: 'u-frank',
      username: 'frank',
      sessions: 1,
      outcome: 'success',
    })

    const old = await signInWithForm(authz.app, { returnTo: '/account' }, 'frank', 'bob-pw')
    expect(old.res.statusCode).toBe(401)
    const fresh = await signInWithForm(authz.app, { returnTo: '/account' }, 'frank', 'a new passphrase')
    expect(fresh.res.statusCode).toBe(303)
    expect(authz.logs.join('\n')).not.toContain('a new passphrase')
  })

  it.each([
    ['missing', '', 'long enough', 'long enough', 400, 'Enter your current password and a new one.'],
    ['too_short', 'bob-pw', 'short', 'short', 400, 'The new password must have at least 8 characters.'],
    ['mismatch', 'bob-pw', 'long enough', 'long enougH', 400, 'The two new passwords are not the same.'],
    ['unchanged', 'bob-pw-x', 'bob-pw-x', 'bob-pw-x', 400, 'The new password is the same as the current one.'],
  ])('refuses %s with 400 and a message, counting no failed sign-in', async (reason, current, next, confirm, status, message) => {
    const here = await signIn('dave', 'bob-pw')
    const before = audit('signin.failed').length
    const res = await change(here, current, next, confirm)
    expect(res.statusCode).toBe(status)
    expect(res.body).toContain(`<div class="alert" role="alert"><p>${message}</p></div>`)
    expect(audit('signin.failed').length).toBe(before)
    expect(audit('account.password_refused').at(-1)).toMatchObject({ subject: 'u-dave', reason })
  })

  it('counts a wrong current password toward the lockout, as a failed sign-in, and a locked account cannot change it', async () => {
    const here = await signIn('carol', 'bob-pw')
    const message = 'The current password is incorrect, or your account cannot change it right now. Check it and try again.'
    for (const guess of ['guess-one', 'guess-two', 'guess-three']) {
      const res = await change(here, guess, 'a new passphrase')
      expect(res.statusCode).toBe(401)
      expect(res.body).toContain(message)
    }
    expect(
      audit('signin.failed')
        .slice(-3)
        .map((e) => [e.username, e.reason]),
    ).toEqual([
      ['carol', 'bad_password'],
      ['carol', 'bad_password'],
      ['carol', 'bad_password'],
    ])
    expect(audit('user.locked_out').at(-1)).toMatchObject({ username: 'carol' })
    // LOCKOUT_THRESHOLD=3: locked now, the right password included, here and on the sign-in page.
    const locked = await change(here, 'bob-pw', 'a new passphrase')
    expect(locked.statusCode).toBe(401)
    expect(locked.body).toContain(message)
    expect((await signInWithForm(authz.app, { returnTo: '/account' }, 'carol', 'bob-pw')).res.statusCode).toBe(401)
    const { rows } = await authz.db.query<{ password_hash: string }>(
      `SELECT u.password_hash = b.password_hash AS same FROM users u, users b WHERE u.username = 'carol' AND b.username = 'bob'`,
    )
    expect(rows).toEqual([{ same: true }])
  })
})

describe('forms from elsewhere', () => {
  it.each([
    ['removing an app', '/account', { action: 'revoke-app', client_id: 'web' }],
    ['signing out of other sessions', '/account', { action: 'end-other-sessions' }],
    [
      'changing the password',
      '/account/password',
      { current_password: 'bob-pw', new_password: 'a new passphrase', confirm_password: 'a new passphrase' },
    ],
  ])('refuses %s without its CSRF token, and from another origin, changing nothing', async (_name, url, fields) => {
    const bob = await signIn('bob', 'bob-pw')
    const other = await signIn('bob', 'bob-pw')
    const page = await get(url, bob)
    const jar = withCookies(bob, page.headers['set-cookie'])
    const noToken = await authz.app.inject({ method: 'POST', url, headers: { ...FORM, cookie: jar }, payload: form(fields) })
    expect(noToken.statusCode).toBe(403)
    expect(noToken.body).toContain('This form has expired or did not come from the page you have open here')
    const crossSite = await authz.app.inject({
      method: 'POST',
      url,
      headers: { ...FORM, cookie: jar, origin: 'https://evil.example' },
      payload: form({ csrf: csrfIn(page.body), ...fields }),
    })
    expect(crossSite.statusCode).toBe(403)
    expect(crossSite.body).toContain('This form was sent from another website')
    expect((await get('/account', other)).statusCode).toBe(200)
    const { rows } = await authz.db.query(`SELECT client_id FROM consents WHERE subject_id = 'u-bob'`)
    expect(rows).toEqual([{ client_id: 'web' }])
    expect((await signInWithForm(authz.app, { returnTo: '/account' }, 'bob', 'bob-pw')).res.statusCode).toBe(303)
  })
})
