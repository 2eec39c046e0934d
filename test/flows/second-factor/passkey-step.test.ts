// A passkey as the second factor after a password, over app.inject: who is asked for it, what the
// page offers, that only the signed-in person's own passkey is accepted (another person's is
// refused, counted and audited), and what the tokens then say (acr phr, amr pwd, hwk, mfa). The
// authenticator is played here: a P-256 key whose COSE public key is stored as a registered
// passkey would be, and assertions (WebAuthn §6.1, §7.2) signed with it for this issuer's RP id and
// origin over the page's challenge. The ceremony in a real browser: test/e2e/passkey-browser.test.ts.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'
import { isoCBOR } from '@simplewebauthn/server/helpers'
import { decodeJwt } from 'jose'
import { afterEach, describe, expect, it } from 'vitest'
import { FORM, form, type TestApp } from '../../helpers/app.js'
import { csrfIn, postForm, withCookies } from '../../helpers/http.js'
import { authorizeUrl, located, pkcePair, session, signInAt, SPA_CB } from '../authorization-code/harness.js'
import { answerCode, createMfaTestApp, enrol, STRICT_CB, totp } from './harness.js'

const RP_ID = 'authz.test'
const ORIGIN = 'https://authz.test'

interface Credential {
  id: string
  subjectId: string
  privateKey: KeyObject
  counter: number
}

let authz: TestApp
afterEach(async () => authz?.close())

/** A passkey of `subjectId`, stored as registration keeps one (device-bound: BE off). */
async function addPasskey(subjectId: string, name = 'Laptop'): Promise<Credential> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const jwk = publicKey.export({ format: 'jwk' })
  // RFC 9053 §7.1.1: an EC2 key, ES256, curve P-256, x and y.
  const cose = isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
    ]),
  )
  const id = randomBytes(16).toString('base64url')
  await authz.db.query(
    `INSERT INTO passkeys (credential_id, subject_id, public_key, counter, transports, backup_eligible, backed_up, aaguid, name, created_at)
     VALUES ($1, $2, $3, 0, '{internal}', false, false, '00000000-0000-0000-0000-000000000000', $4, $5)`,
    [id, subjectId, Buffer.from(cose), name, new Date(authz.clock.now())],
  )
  return { id, subjectId, privateKey, counter: 0 }
}

/** The authenticator's answer to `challenge`: flags UP and UV, the counter moved on, signed over authData ‖ SHA-256(clientDataJSON). */
function assertion(c: Credential, challenge: string): string {
  c.counter += 1
  const authData = Buffer.alloc(37)
  createHash('sha256').update(RP_ID).digest().copy(authData, 0)
  authData[32] = 0x05
  authData.writeUInt32BE(c.counter, 33)
  const clientData = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge, origin: ORIGIN, crossOrigin: false }))
  const signature = sign('sha256', Buffer.concat([authData, createHash('sha256').update(clientData).digest()]), c.privateKey)
  return JSON.stringify({
    id: c.id,
    rawId: c.id,
    type: 'public-key',
    clientExtensionResults: {},
    response: {
      authenticatorData: authData.toString('base64url'),
      clientDataJSON: clientData.toString('base64url'),
      signature: signature.toString('base64url'),
      userHandle: createHash('sha256').update(c.subjectId).digest('base64url'),
    },
  })
}

const unescapeAttr = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')

/** The passkey form of the second-step page at `url`: its WebAuthn options (null when there is none). */
function passkeyOptionsIn(body: string): Record<string, unknown> | null {
  const m = /<form method="post" action="[^"]+" class="passkey" data-passkey="sign-in" data-options="([^"]+)">/.exec(body)
  return m ? (JSON.parse(unescapeAttr(m[1]!)) as Record<string, unknown>) : null
}

/** Opens the second-step page at `url` and answers it with `credential`'s assertion of the page's own challenge. */
async function answerPasskey(url: string, cookie: string, credential: Credential) {
  const page = await authz.app.inject({ method: 'GET', url, headers: { cookie } })
  expect(page.statusCode).toBe(200)
  const options = passkeyOptionsIn(page.body)
  expect(options, 'the page offers a passkey').not.toBeNull()
  const jar = withCookies(cookie, page.headers['set-cookie'])
  const answer = assertion(credential, String(options!.challenge))
  const res = await authz.app.inject({
    method: 'POST',
    url,
    headers: { ...FORM, cookie: jar },
    payload: form({ csrf: csrfIn(page.body), kind: 'passkey', webauthn_response: answer }),
  })
  return { res, answer, csrf: csrfIn(page.body), cookie: withCookies(jar, res.headers['set-cookie']) }
}

/** A new browser: the authorization request, the sign-in with the password, and where it sends it. */
async function signInFor(url: string, username = 'alice', password = 'alice-pw') {
  const first = await authz.app.inject({ method: 'GET', url })
  expect(first.statusCode).toBe(303)
  return signInAt(authz, String(first.headers.location), username, password)
}

async function tokensFor(location: string, verifier: string, clientId = 'spa', redirectUri = SPA_CB) {
  const code = located({ headers: { location } }).searchParams.get('code')
  expect(code, 'the redirect carries a code').toBeTruthy()
  const res = await postForm(authz.app, '/connect/token', {
    grant_type: 'authorization_code',
    client_id: clientId,
    redirect_uri: redirectUri,
    code: code!,
    code_verifier: verifier,
  })
  expect(res.statusCode).toBe(200)
  return res.json<{ id_token: string; access_token: string }>()
}

const audits = (event: string) =>
  authz.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.log === 'audit' && l.event === event)

const spaUrl = (params: Record<string, string | undefined> = {}, challenge?: string) =>
  authorizeUrl({ client_id: 'spa', redirect_uri: SPA_CB, ...params }, challenge)

describe('a passkey as the second factor (PASSKEYS=true)', () => {
  it('asks a person with a passkey and no codes for it after the password; the tokens say acr phr, amr pwd, hwk, mfa', async () => {
    authz = await createMfaTestApp({ PASSKEYS: 'true' })
    const alice = await addPasskey('u-alice')
    await addPasskey('u-bob') // someone else's: never offered on alice's page
    const { verifier, challenge } = pkcePair()
    const url = spaUrl({}, challenge)
    const { cookie, next } = await signInFor(url)
    expect(next.startsWith(`/account/sign-in/code?return_to=${encodeURIComponent(`${url}&sign_in=`)}`)).toBe(true)
    const marked = new URL(next, ORIGIN).searchParams.get('return_to')!
    // The password alone does not finish the sign-in.
    const early = await authz.app.inject({ method: 'GET', url: marked, headers: { cookie } })
    expect(early.headers.location).toBe(next)

    const page = await authz.app.inject({ method: 'GET', url: next, headers: { cookie } })
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('Use your passkey to finish signing in as <strong id="username">alice</strong>.')
    expect(page.body).toContain('<button class="button primary" type="submit" id="passkey-step" autofocus>Use your passkey</button>')
    // No codes to offer: she has none.
    expect(page.body).not.toContain('<label for="code">')
    expect(page.body).not.toContain('Use a recovery code instead')
    expect(page.headers['content-security-policy']).toContain("script-src 'self'")
    expect(passkeyOptionsIn(page.body)).toEqual({
      rpId: RP_ID,
      challenge: expect.stringMatching(/^[\w-]{96}$/),
      timeout: 300000,
      userVerification: 'required',
      allowCredentials: [{ id: alice.id, type: 'public-key', transports: ['internal'] }],
    })

    const { res } = await answerPasskey(next, cookie, alice)
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(marked)
    const back = await authz.app.inject({ method: 'GET', url: marked, headers: { cookie } })
    const tokens = await tokensFor(String(back.headers.location), verifier)
    expect(decodeJwt(tokens.id_token)).toMatchObject({ sub: 'u-alice', acr: 'phr', amr: ['pwd', 'hwk', 'mfa'] })
    expect(decodeJwt(tokens.access_token)).toMatchObject({ acr: 'phr', amr: ['pwd', 'hwk', 'mfa'] })
    expect(audits('signin.stepped_up')).toEqual([expect.objectContaining({ subject: 'u-alice', factor: 'passkey' })])
  })

  it("refuses another person's passkey at alice's step, with a clear message, counted and audited, the session unchanged", async () => {
    authz = await createMfaTestApp({ PASSKEYS: 'true' })
    const alice = await addPasskey('u-alice')
    const bob = await addPasskey('u-bob')
    const url = spaUrl()
    const { cookie, next } = await signInFor(url)
    const { res, answer, csrf } = await answerPasskey(next, cookie, bob)
    expect(res.statusCode).toBe(401)
    expect(res.body).toContain(
      '<div class="alert" role="alert" id="second-factor-error"><p>That passkey does not belong to alice. Use a passkey you added to this account.</p></div>',
    )
    expect(res.headers['set-cookie'] ?? '').not.toContain('authz-session=')
    expect(audits('passkey.failed')).toEqual([expect.objectContaining({ subject: 'u-alice', reason: 'other_account' })])
    expect(audits('passkey.used')).toEqual([])
    // Counted toward alice's lockout (the password's counter: the password was right, so it was empty).
    const counted = await authz.db.query<{ failures: number }>(
      `SELECT failures FROM failure_counters WHERE kind = 'user' AND name = 'u-alice' AND source = ''`,
    )
    expect(counted.rows).toEqual([{ failures: 1 }])
    // Bob's passkey was not used, and alice's session is still the password alone.
    const used = await authz.db.query<{ last_used_at: Date | null }>(`SELECT last_used_at FROM passkeys WHERE subject_id = 'u-bob'`)
    expect(used.rows).toEqual([{ last_used_at: null }])
    const marked = new URL(next, ORIGIN).searchParams.get('return_to')!
    const still = await authz.app.inject({ method: 'GET', url: marked, headers: { cookie } })
    expect(still.headers.location).toBe(next)
    // The same answer posted again is refused too; her own passkey then goes through.
    const replay = await authz.app.inject({
      method: 'POST',
      url: next,
      headers: { ...FORM, cookie },
      payload: form({ csrf, kind: 'passkey', webauthn_response: answer }),
    })
    expect(replay.statusCode).toBe(401)
    const ok = await answerPasskey(next, cookie, alice)
    expect(ok.res.statusCode).toBe(303)
    expect(ok.res.headers.location).toBe(marked)
  })

  it("refuses a passkey answer made for another session's step (the challenge is bound to the session)", async () => {
    authz = await createMfaTestApp({ PASSKEYS: 'true' })
    const alice = await addPasskey('u-alice')
    const one = await signInFor(spaUrl())
    const two = await signInFor(spaUrl())
    const page = await authz.app.inject({ method: 'GET', url: one.next, headers: { cookie: one.cookie } })
    const answer = assertion(alice, String(passkeyOptionsIn(page.body)!.challenge))
    const other = await authz.app.inject({ method: 'GET', url: two.next, headers: { cookie: two.cookie } })
    const res = await authz.app.inject({
      method: 'POST',
      url: two.next,
      headers: { ...FORM, cookie: withCookies(two.cookie, other.headers['set-cookie']) },
      payload: form({ csrf: csrfIn(other.body), kind: 'passkey', webauthn_response: answer }),
    })
    expect(res.statusCode).toBe(401)
    expect(res.body).toContain('That took too long or was used already. Try again.')
    expect(audits('passkey.failed')).toEqual([expect.objectContaining({ subject: 'u-alice', reason: 'challenge' })])
  })

  it('offers both to a person with both: the passkey first, "Use a one-time code instead" the other choice; a code gives acr mfa', async () => {
    authz = await createMfaTestApp({ PASSKEYS: 'true' })
    const { secret } = await enrol(authz, await session(authz))
    authz.clock.advance(30)
    await addPasskey('u-alice')
    const { verifier, challenge } = pkcePair()
    const { cookie, next } = await signInFor(spaUrl({}, challenge))
    const page = await authz.app.inject({ method: 'GET', url: next, headers: { cookie } })
    const passkeyAt = page.body.indexOf('id="passkey-step"')
    const codeAt = page.body.indexOf('<details class="alternative" id="use-code">\n<summary>Use a one-time code instead</summary>')
    expect(passkeyAt).toBeGreaterThan(0)
    expect(codeAt).toBeGreaterThan(passkeyAt)
    expect(page.body).toContain('<summary>Use a recovery code instead</summary>')
    // A wrong code opens the code choice again, its field pointing at the refusal.
    const wrong = await answerCode(authz, next, cookie, (await totp(authz, secret)) === '000000' ? '111111' : '000000')
    expect(wrong.res.statusCode).toBe(401)
    expect(wrong.res.body).toContain('<details class="alternative" id="use-code" open>')
    expect(wrong.res.body).toContain('<div class="alert" role="alert" id="code-error"><p>That code did not work')
    expect(wrong.res.body).toContain('aria-describedby="code-hint code-error" aria-invalid="true" autofocus')
    expect(wrong.res.body).not.toContain('id="passkey-step" autofocus')
    const { res } = await answerCode(authz, next, cookie, await totp(authz, secret))
    expect(res.statusCode).toBe(303)
    const back = await authz.app.inject({ method: 'GET', url: String(res.headers.location), headers: { cookie } })
    expect(decodeJwt((await tokensFor(String(back.headers.location), verifier)).id_token)).toMatchObject({
      acr: 'mfa',
      amr: ['pwd', 'otp', 'mfa'],
    })
  })

  it('steps an older password session up with the passkey only, for acr_values=mfa and for a requireMfa client', async () => {
    authz = await createMfaTestApp({ PASSKEYS: 'true' })
    const weak = await session(authz) // signed in with the password before the passkey was added
    const alice = await addPasskey('u-alice')
    for (const url of [spaUrl({ acr_values: 'mfa' }), authorizeUrl({ client_id: 'strict', redirect_uri: STRICT_CB, scope: 'openid' })]) {
      const res = await authz.app.inject({ method: 'GET', url, headers: { cookie: weak } })
      expect(res.statusCode).toBe(303)
      expect(res.headers.location).toBe(`/account/sign-in/code?return_to=${encodeURIComponent(url)}`)
    }
    // prompt=none cannot take the step.
    const none = await authz.app.inject({ method: 'GET', url: spaUrl({ acr_values: 'mfa', prompt: 'none' }), headers: { cookie: weak } })
    expect(located(none).searchParams.get('error')).toBe('interaction_required')
    const { res } = await answerPasskey('/account/sign-in/code', weak, alice)
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/account')
    const after = await authz.app.inject({ method: 'GET', url: spaUrl({ acr_values: 'mfa', prompt: 'none' }), headers: { cookie: weak } })
    expect(located(after).searchParams.get('code')).toBeTruthy()
  })

  it('steps a password and code session up to phr with the passkey in the same session: amr keeps pwd and otp, no code is taken for it', async () => {
    authz = await createMfaTestApp({ PASSKEYS: 'true' })
    const { secret } = await enrol(authz, await session(authz))
    authz.clock.advance(30)
    const alice = await addPasskey('u-alice')
    const { verifier, challenge } = pkcePair()
    const url = spaUrl({}, challenge)
    const { cookie, next } = await signInFor(url)
    const coded = await answerCode(authz, next, cookie, await totp(authz, secret))
    expect(coded.res.statusCode).toBe(303) // acr mfa now

    const phrUrl = spaUrl({ acr_values: 'phr' }, challenge)
    const res = await authz.app.inject({ method: 'GET', url: phrUrl, headers: { cookie } })
    expect(res.statusCode).toBe(303)
    const step = `/account/sign-in/code?level=phr&return_to=${encodeURIComponent(phrUrl)}`
    expect(res.headers.location).toBe(step)
    // prompt=none cannot take the step.
    const none = await authz.app.inject({ method: 'GET', url: spaUrl({ acr_values: 'phr', prompt: 'none' }), headers: { cookie } })
    expect(located(none).searchParams.get('error')).toBe('interaction_required')

    const page = await authz.app.inject({ method: 'GET', url: step, headers: { cookie } })
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain(`<form method="post" action="${step.replace(/&/g, '&amp;')}" class="passkey"`)
    // Only the passkey: a code is less than phr.
    expect(page.body).not.toContain('<label for="code">')
    expect(page.body).not.toContain('Use a recovery code instead')
    const code = await authz.app.inject({
      method: 'POST',
      url: step,
      headers: { ...FORM, cookie: withCookies(cookie, page.headers['set-cookie']) },
      payload: form({ csrf: csrfIn(page.body), kind: 'otp', code: await totp(authz, secret) }),
    })
    expect(code.statusCode).toBe(200)
    expect(code.body).toContain('id="passkey-step"')
    expect(audits('signin.stepped_up')).toHaveLength(1) // the code of the first sign-in only

    const { res: done } = await answerPasskey(step, cookie, alice)
    expect(done.statusCode).toBe(303)
    expect(done.headers.location).toBe(phrUrl)
    const back = await authz.app.inject({ method: 'GET', url: phrUrl, headers: { cookie } })
    const tokens = await tokensFor(String(back.headers.location), verifier)
    expect(decodeJwt(tokens.id_token)).toMatchObject({ sub: 'u-alice', acr: 'phr', amr: ['pwd', 'otp', 'mfa', 'hwk'] })
  })

  it('sends a person without a passkey who is asked for phr to the page that asks for one, never to a code', async () => {
    authz = await createMfaTestApp({ PASSKEYS: 'true' })
    const weak = await session(authz)
    const url = spaUrl({ acr_values: 'phr' })
    const res = await authz.app.inject({ method: 'GET', url, headers: { cookie: weak } })
    expect(res.headers.location).toBe(`/account/sign-in/passkey?return_to=${encodeURIComponent(url)}`)
    // The second-step page asked for phr directly sends there too.
    const direct = await authz.app.inject({
      method: 'GET',
      url: `/account/sign-in/code?level=phr&return_to=${encodeURIComponent(url)}`,
      headers: { cookie: weak },
    })
    expect(direct.headers.location).toBe(`/account/sign-in/passkey?return_to=${encodeURIComponent(url)}`)
  })

  it('does not let a password alone set up one-time codes for a person whose second factor is a passkey', async () => {
    authz = await createMfaTestApp({ PASSKEYS: 'true' })
    const weak = await session(authz)
    await addPasskey('u-alice')
    const res = await authz.app.inject({ method: 'GET', url: '/account/two-step', headers: { cookie: weak } })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/account/sign-in/code?return_to=%2Faccount')
    const account = await authz.app.inject({ method: 'GET', url: '/account', headers: { cookie: weak } })
    expect(account.headers.location).toBe('/account/sign-in/code?return_to=%2Faccount')
  })

  it('refuses the password grant for a person whose second factor is a passkey', async () => {
    authz = await createMfaTestApp({ PASSKEYS: 'true' })
    await addPasskey('u-alice')
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
    expect(res.json().error).toBe('invalid_grant')
  })

  it('answers a passkey form sent without JavaScript with a page that says so', async () => {
    authz = await createMfaTestApp({ PASSKEYS: 'true' })
    await addPasskey('u-alice')
    const { cookie, next } = await signInFor(spaUrl())
    const page = await authz.app.inject({ method: 'GET', url: next, headers: { cookie } })
    const res = await authz.app.inject({
      method: 'POST',
      url: next,
      headers: { ...FORM, cookie: withCookies(cookie, page.headers['set-cookie']) },
      payload: form({ csrf: csrfIn(page.body), kind: 'passkey' }),
    })
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('Using a passkey needs JavaScript. Turn it on for this site.')
  })
})

describe('passkeys off (PASSKEYS=false, the default)', () => {
  it('neither asks for nor offers a stored passkey: a password alone signs in; a requireMfa client leads to codes', async () => {
    authz = await createMfaTestApp()
    await addPasskey('u-alice')
    const url = spaUrl()
    const { next } = await signInFor(url)
    expect(next.startsWith(`${url}&sign_in=`)).toBe(true)
    const strict = authorizeUrl({ client_id: 'strict', redirect_uri: STRICT_CB, scope: 'openid' })
    const signedIn = await signInFor(strict)
    const step = await authz.app.inject({ method: 'GET', url: signedIn.next, headers: { cookie: signedIn.cookie } })
    expect(step.headers.location).toBe(`/account/two-step?return_to=${encodeURIComponent(signedIn.next)}`)
    const code = await authz.app.inject({ method: 'GET', url: '/account/sign-in/code', headers: { cookie: signedIn.cookie } })
    expect(code.headers.location).toBe('/account/two-step')
  })
})
