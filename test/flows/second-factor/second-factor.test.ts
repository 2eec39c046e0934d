// One-time codes and recovery codes as a person and an application see them: enrolment, the code
// after the password, what the tokens then say (acr, amr), single use, the shared lockout, and
// step-up of a session too weak for the request.
import { decodeJwt } from 'jose'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { TestApp } from '../../helpers/app.js'
import { postForm } from '../../helpers/http.js'
import { authorizeUrl, located, pkcePair, session, signInAt, SPA_CB } from '../authorization-code/harness.js'
import { answerCode, createMfaTestApp, enrol, postFrom, STRICT_CB, totp } from './harness.js'

let authz: TestApp
beforeEach(async () => {
  authz = await createMfaTestApp()
})
afterEach(async () => authz.close())

const spaUrl = (params: Record<string, string | undefined> = {}, challenge?: string) =>
  authorizeUrl({ client_id: 'spa', redirect_uri: SPA_CB, ...params }, challenge)

/** Alice with one-time codes set up (in a session of her own, then that session signed out of the picture). */
async function aliceEnrolled() {
  const { secret, recoveryCodes } = await enrol(authz, await session(authz))
  authz.clock.advance(30) // seconds: the enrolment's code is spent, the next step's code is a fresh one
  return { secret, recoveryCodes }
}

/** A new browser: the authorization request, the sign-in, and where the sign-in sends it. */
async function signInFor(url: string, username = 'alice', password = 'alice-pw') {
  const first = await authz.app.inject({ method: 'GET', url })
  expect(first.statusCode).toBe(303)
  return signInAt(authz, String(first.headers.location), username, password)
}

async function redeemSpa(location: string, verifier: string) {
  const code = located({ headers: { location } }).searchParams.get('code')
  expect(code).toBeTruthy()
  const res = await postForm(authz.app, '/connect/token', {
    grant_type: 'authorization_code',
    client_id: 'spa',
    redirect_uri: SPA_CB,
    code: code!,
    code_verifier: verifier,
  })
  expect(res.statusCode).toBe(200)
  return res.json<{ id_token: string; access_token: string; refresh_token?: string }>()
}

describe('one-time codes (RFC 6238)', () => {
  it('enrols from the page: the secret as text, an otpauth link, a QR code, then exactly ten recovery codes', async () => {
    const cookie = await session(authz)
    const { page, res, recoveryCodes } = await enrol(authz, cookie)
    expect(page.body).toContain('<label for="code">One-time code</label>')
    expect(page.body).toMatch(/href="otpauth:\/\/totp\/[^"]*secret=[A-Z2-7]{32}/)
    expect(page.body).toMatch(/<div class="qr" role="img" aria-label="[^"]+"><svg /)
    expect(res.body).toContain('One-time codes are on.')
    expect(recoveryCodes).toHaveLength(10)
    expect(new Set(recoveryCodes).size).toBe(10)
    for (const c of recoveryCodes) expect(c).toMatch(/^[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}$/)
    const account = await authz.app.inject({ method: 'GET', url: '/account', headers: { cookie } })
    expect(account.body).toContain('Two-step verification')
    expect(account.body).toContain('Recovery codes left: 10.')
  })

  it('asks for the code after the password; the tokens then say acr "mfa" and amr pwd, otp, mfa; a refresh keeps them', async () => {
    const { secret } = await aliceEnrolled()
    const { verifier, challenge } = pkcePair()
    const url = spaUrl({ scope: 'openid offline_access' }, challenge)
    const { cookie, next } = await signInFor(url)
    // Back to the request as the sign-in marked it (src/flows/authorization-code/service.ts).
    expect(next.startsWith(`/account/sign-in/code?return_to=${encodeURIComponent(`${url}&sign_in=`)}`)).toBe(true)
    const marked = new URL(next, 'https://authz.test').searchParams.get('return_to')!
    // The password alone is not a sign-in yet: the request still sends the person to the code.
    const early = await authz.app.inject({ method: 'GET', url: marked, headers: { cookie } })
    expect(early.statusCode).toBe(303)
    expect(early.headers.location).toBe(next)
    const page = await authz.app.inject({ method: 'GET', url: next, headers: { cookie } })
    expect(page.body).toContain('<label for="code">One-time code</label>')
    expect(page.body).toContain('<label for="recovery-code">Recovery code</label>')
    const { res } = await answerCode(authz, next, cookie, await totp(authz, secret))
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(marked)
    const back = await authz.app.inject({ method: 'GET', url: marked, headers: { cookie } })
    const tokens = await redeemSpa(String(back.headers.location), verifier)
    expect(decodeJwt(tokens.id_token)).toMatchObject({ acr: 'mfa', amr: ['pwd', 'otp', 'mfa'] })
    expect(decodeJwt(tokens.access_token)).toMatchObject({ acr: 'mfa', amr: ['pwd', 'otp', 'mfa'] })
    const refreshed = await postForm(authz.app, '/connect/token', {
      grant_type: 'refresh_token',
      client_id: 'spa',
      refresh_token: tokens.refresh_token!,
    })
    expect(refreshed.statusCode).toBe(200)
    expect(decodeJwt(refreshed.json().id_token)).toMatchObject({ acr: 'mfa', amr: ['pwd', 'otp', 'mfa'] })
  })

  it("lets the code page's form lead on to the client's redirect URI (a browser applies its CSP form-action to the redirects)", async () => {
    const { secret } = await aliceEnrolled()
    const { cookie, next } = await signInFor(spaUrl())
    const csp = `default-src 'none'; style-src 'self'; form-action 'self' https://spa.example; frame-ancestors 'none'; base-uri 'none'`
    const page = await authz.app.inject({ method: 'GET', url: next, headers: { cookie } })
    expect(page.headers['content-security-policy']).toBe(csp)
    const refused = await answerCode(authz, next, cookie, (await totp(authz, secret)) === '000000' ? '111111' : '000000')
    expect(refused.res.statusCode).toBe(401)
    expect(refused.res.headers['content-security-policy']).toBe(csp)
  })

  it('refuses a code used once already, in another browser', async () => {
    const { secret } = await aliceEnrolled()
    const code = await totp(authz, secret)
    const one = await signInFor(spaUrl())
    expect((await answerCode(authz, one.next, one.cookie, code)).res.statusCode).toBe(303)
    const two = await signInFor(spaUrl())
    const { res } = await answerCode(authz, two.next, two.cookie, code)
    expect(res.statusCode).toBe(401)
    // The refusal is announced, and the field points at it (WCAG 3.3.1: the error is tied to its field).
    expect(res.body).toContain('<div class="alert" role="alert" id="code-error"><p>That code did not work')
    expect(res.body).toContain('aria-describedby="code-hint code-error" aria-invalid="true"')
    // An earlier step's code, still inside the window, is refused too: only later steps count.
    expect((await answerCode(authz, two.next, two.cookie, await totp(authz, secret, -1))).res.statusCode).toBe(401)
  })

  it('accepts a recovery code once', async () => {
    const { recoveryCodes } = await aliceEnrolled()
    const one = await signInFor(spaUrl())
    const ok = await answerCode(authz, one.next, one.cookie, recoveryCodes[3]!.toUpperCase(), 'recovery_code')
    expect(ok.res.statusCode).toBe(303)
    const two = await signInFor(spaUrl())
    const again = await answerCode(authz, two.next, two.cookie, recoveryCodes[3]!, 'recovery_code')
    expect(again.res.statusCode).toBe(401)
    expect(again.res.body).toContain('That recovery code did not work')
    expect(again.res.body).toContain('<details class="alternative" open>')
    const account = await authz.app.inject({ method: 'GET', url: '/account', headers: { cookie: one.cookie } })
    expect(account.body).toContain('Recovery codes left: 9.')
  })

  it('counts wrong codes toward the password lockout; a right password in between does not reset it', async () => {
    const { secret } = await aliceEnrolled()
    const url = spaUrl()
    const first = await authz.app.inject({ method: 'GET', url })
    const signInPage = String(first.headers.location)
    for (let i = 0; i < 5; i++) {
      const { res } = await postFrom(authz, signInPage, '', { username: 'alice', password: 'wrong' })
      expect(res.statusCode).toBe(401)
    }
    const { cookie, next } = await signInAt(authz, signInPage) // right password: 303 to the code
    for (let i = 0; i < 4; i++) expect((await answerCode(authz, next, cookie, '000000')).res.statusCode).toBe(401)
    // The tenth failure in a row locks the account: now even the right code is refused.
    expect((await answerCode(authz, next, cookie, '000001')).res.statusCode).toBe(401)
    expect((await answerCode(authz, next, cookie, await totp(authz, secret))).res.statusCode).toBe(401)
    expect(authz.logs.some((l) => l.includes('"event":"user.locked_out"'))).toBe(true)
    const { res } = await postFrom(authz, signInPage, '', { username: 'alice', password: 'alice-pw' })
    expect(res.statusCode).toBe(401) // locked for the password too
  })
})

describe('who must use a second factor', () => {
  it('leads an unenrolled person to enrolment for a requireMfa client, then on to the app', async () => {
    const { verifier, challenge } = pkcePair()
    const url = authorizeUrl({ client_id: 'strict', redirect_uri: STRICT_CB, scope: 'openid' }, challenge)
    const { cookie, next } = await signInFor(url, 'bob', 'bob-pw')
    expect(next.startsWith(`${url}&sign_in=`)).toBe(true)
    const step = await authz.app.inject({ method: 'GET', url: next, headers: { cookie } })
    expect(step.statusCode).toBe(303)
    const enrolAt = String(step.headers.location)
    expect(enrolAt).toBe(`/account/two-step?return_to=${encodeURIComponent(next)}`)
    const { res } = await enrol(authz, cookie, enrolAt)
    expect(res.body).toContain(`href="${next.replace(/&/g, '&amp;')}"`)
    const back = await authz.app.inject({ method: 'GET', url: next, headers: { cookie } })
    const code = located(back).searchParams.get('code')!
    const token = await postForm(authz.app, '/connect/token', {
      grant_type: 'authorization_code',
      client_id: 'strict',
      redirect_uri: STRICT_CB,
      code,
      code_verifier: verifier,
    })
    expect(decodeJwt(token.json().id_token)).toMatchObject({ acr: 'mfa', amr: ['pwd', 'otp', 'mfa'] })
  })

  it('sends a requireMfa user to enrolment straight after the password', async () => {
    const url = spaUrl()
    const { next } = await signInFor(url, 'carol', 'carol-pw')
    expect(next.startsWith(`/account/two-step?return_to=${encodeURIComponent(`${url}&sign_in=`)}`)).toBe(true)
  })

  it('steps up a password-only session for acr_values=mfa, asking only the code; enrolling elsewhere left it as it was', async () => {
    const weak = await session(authz) // browser A: a password sign-in before the enrolment
    const { secret } = await aliceEnrolled() // browser B
    const { verifier, challenge } = pkcePair()
    const url = spaUrl({ acr_values: 'mfa' }, challenge)
    const res = await authz.app.inject({ method: 'GET', url, headers: { cookie: weak } })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`/account/sign-in/code?return_to=${encodeURIComponent(url)}`)
    const answered = await answerCode(authz, String(res.headers.location), weak, await totp(authz, secret))
    expect(answered.res.headers.location).toBe(url)
    const back = await authz.app.inject({ method: 'GET', url, headers: { cookie: weak } })
    const tokens = await redeemSpa(String(back.headers.location), verifier)
    expect(decodeJwt(tokens.id_token)).toMatchObject({ acr: 'mfa', amr: ['pwd', 'otp', 'mfa'] })
    expect(authz.logs.some((l) => l.includes('"event":"signin.stepped_up"'))).toBe(true)
  })

  it('answers prompt=none on a session too weak with interaction_required, state and iss', async () => {
    const weak = await session(authz)
    const res = await authz.app.inject({ method: 'GET', url: spaUrl({ acr_values: 'mfa', prompt: 'none' }), headers: { cookie: weak } })
    expect(res.statusCode).toBe(303)
    const back = located(res)
    expect(`${back.origin}${back.pathname}`).toBe(SPA_CB)
    expect(Object.fromEntries(back.searchParams)).toEqual({
      error: 'interaction_required',
      error_description: 'the sign-in must be stepped up',
      state: 'st-1',
      iss: 'https://authz.test',
    })
  })

  it('sends acr_values=phr to the passkey page, never to a code', async () => {
    const { secret } = await aliceEnrolled()
    const url = spaUrl({ acr_values: 'phr' })
    const { cookie, next } = await signInFor(url)
    const { res: answered } = await answerCode(authz, next, cookie, await totp(authz, secret))
    const marked = String(answered.headers.location)
    const res = await authz.app.inject({ method: 'GET', url: marked, headers: { cookie } })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`/account/sign-in/passkey?return_to=${encodeURIComponent(marked)}`)
  })

  it('gives a password alone no acr level: the default stays', async () => {
    const { verifier, challenge } = pkcePair()
    const url = spaUrl({}, challenge)
    const { cookie, next } = await signInFor(url, 'bob', 'bob-pw')
    const back = await authz.app.inject({ method: 'GET', url: next, headers: { cookie } })
    const tokens = await redeemSpa(String(back.headers.location), verifier)
    expect(decodeJwt(tokens.id_token)).toMatchObject({ acr: '1', amr: ['pwd'] })
  })

  it('refuses the password grant for a person with a second factor', async () => {
    await aliceEnrolled()
    await authz.db.query(`UPDATE clients SET allowed_grant_types = array_append(allowed_grant_types, 'password') WHERE client_id = 'web'`)
    const res = await postForm(authz.app, '/connect/token', {
      grant_type: 'password',
      client_id: 'web',
      client_secret: 'web-secret',
      username: 'alice',
      password: 'alice-pw',
      scope: 'openid',
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({
      error: 'invalid_grant',
      error_description: 'the user must sign in with a second factor, which this grant cannot ask for',
    })
  })

  it('publishes mfa and phr in acr_values_supported', async () => {
    const res = await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })
    expect(res.json().acr_values_supported).toEqual(expect.arrayContaining(['mfa', 'phr']))
  })
})

describe('managing factors', () => {
  it('removing the factor ends the other sessions, and needs the factor first', async () => {
    const { secret } = await aliceEnrolled()
    const other = (await signInFor(spaUrl())).cookie // a second browser, stopped at the code
    const { cookie, next } = await signInFor(spaUrl())
    await answerCode(authz, next, cookie, await totp(authz, secret))
    // The half-signed-in browser is sent to the code before it may remove anything.
    const blocked = await postFrom(authz, '/account/sign-in/code', other, { action: 'remove' }, '/account/two-step')
    expect(blocked.res.statusCode).toBe(303)
    expect(blocked.res.headers.location).toBe('/account/sign-in/code?return_to=%2Faccount')
    const { res } = await postFrom(authz, '/account', cookie, { action: 'remove' }, '/account/two-step')
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('Your one-time codes and recovery codes have been removed.')
    const gone = await authz.app.inject({ method: 'GET', url: '/account', headers: { cookie: other } })
    expect(gone.statusCode).toBe(303)
    expect(String(gone.headers.location)).toMatch(/^\/account\/sign-in\?/)
    expect(authz.logs.some((l) => l.includes('"event":"factor.removed"'))).toBe(true)
  })

  it('keeps the secret encrypted at rest when KEY_ENCRYPTION_SECRET is set', async () => {
    await authz.close()
    authz = await createMfaTestApp({ KEY_ENCRYPTION_SECRET: 'a-long-enough-key-encryption-secret-for-tests' })
    const { secret } = await enrol(authz, await session(authz))
    const { rows } = await authz.db.query<{ secret: string }>(`SELECT secret FROM user_totp WHERE subject_id = 'u-alice'`)
    expect(rows[0]!.secret).toMatch(/^v1\./)
    expect(rows[0]!.secret).not.toContain(secret)
    const codes = await authz.db.query<{ code_hash: string }>(`SELECT code_hash FROM user_recovery_codes WHERE subject_id = 'u-alice'`)
    expect(codes.rows).toHaveLength(10)
  })
})
