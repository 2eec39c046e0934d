// Second factors over app.inject, as a browser without JavaScript drives them: the enrolment page
// read for its secret, one-time codes computed here (otplib) at the test clock's time, the code
// page's forms posted with their CSRF tokens. On the authorization code flow's seed, plus `carol`
// (requireMfa) and the client `strict` (requireMfa, public, no consent).
import { generate } from 'otplib'
import { expect } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import { createTestApp, FORM, form, type TestApp } from '../../helpers/app.js'
import { csrfIn, withCookies } from '../../helpers/http.js'
import { authorizeSeed } from '../authorization-code/harness.js'

export const STRICT_CB = 'https://strict.example/cb'

export async function createMfaTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const authz = await createTestApp({ env })
  const seed = authorizeSeed()
  await applySeed(authz.db, {
    ...seed,
    clients: [
      ...seed.clients,
      {
        clientId: 'strict',
        clientName: 'Strict app',
        requireClientSecret: false,
        requireMfa: true,
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid', 'profile'],
        redirectUris: [STRICT_CB],
      },
    ],
    users: [...seed.users, { subjectId: 'u-carol', username: 'carol', password: 'carol-pw', requireMfa: true, claims: {} }],
  })
  return authz
}

/** The one-time code of `secret` at the test clock's time (`offsetSteps` steps away). */
export function totp(authz: TestApp, secret: string, offsetSteps = 0): Promise<string> {
  return generate({ secret, epoch: Math.floor(authz.clock.now() / 1000) + offsetSteps * 30 })
}

/** The enrolment page's secret, as its text shows it (spaces between groups removed). */
export function secretIn(body: string): string {
  const m = /<code class="secret" id="totp-secret">([^<]+)<\/code>/.exec(body)
  expect(m, 'the enrolment page shows the secret').not.toBeNull()
  return m![1]!.replace(/\s/g, '')
}

export function recoveryCodesIn(body: string): string[] {
  return [...body.matchAll(/<li><code>([a-z2-7-]+)<\/code><\/li>/g)].map((m) => m[1]!)
}

/** GETs `url` with `cookie`, then posts `fields` with the page's CSRF token to `action` (default: the same URL). */
export async function postFrom(authz: TestApp, url: string, cookie: string, fields: Record<string, string>, action = url) {
  const page = await authz.app.inject({ method: 'GET', url, headers: { cookie } })
  expect(page.statusCode, `GET ${url}`).toBe(200)
  const jar = withCookies(cookie, page.headers['set-cookie'])
  const res = await authz.app.inject({
    method: 'POST',
    url: action,
    headers: { ...FORM, cookie: jar },
    payload: form({ csrf: csrfIn(page.body), ...fields }),
  })
  return { page, res, cookie: withCookies(jar, res.headers['set-cookie']) }
}

/** Sets up one-time codes from the enrolment page at `url` (in the session of `cookie`): the secret and the recovery codes. */
export async function enrol(authz: TestApp, cookie: string, url = '/account/two-step') {
  const page = await authz.app.inject({ method: 'GET', url, headers: { cookie } })
  expect(page.statusCode).toBe(200)
  const secret = secretIn(page.body)
  const jar = withCookies(cookie, page.headers['set-cookie'])
  const res = await authz.app.inject({
    method: 'POST',
    url,
    headers: { ...FORM, cookie: jar },
    payload: form({ csrf: csrfIn(page.body), action: 'confirm', code: await totp(authz, secret) }),
  })
  expect(res.statusCode).toBe(200)
  const recoveryCodes = recoveryCodesIn(res.body)
  return { secret, recoveryCodes, res, page, cookie: withCookies(jar, res.headers['set-cookie']) }
}

/** Answers the code page at `url` with a one-time code (kind otp) or a recovery code. */
export function answerCode(authz: TestApp, url: string, cookie: string, code: string, kind: 'otp' | 'recovery_code' = 'otp') {
  return postFrom(authz, url, cookie, { kind, code })
}
