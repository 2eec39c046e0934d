// Sign-in through an upstream OpenID Connect provider, the whole way: the sign-in page's provider
// button, the upstream's sign-in, the callback, the application's code and tokens. The first
// sign-in creates a user linked to (corp, upstream sub); the next finds the same one (a stable
// sub); tokens carry idp and amr. The callback works once, and only in the browser that started it.
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { usersCommand } from '../../../src/cli/users.js'
import { PAGE_CSP } from '../../../src/pages/html.js'
import { postFormBasic } from '../../helpers/http.js'
import { browser, createFederation, located, redeem, signInThroughCorp, UPSTREAM, WEB_CB, type Federation } from './harness.js'

let f: Federation
beforeAll(async () => {
  f = await createFederation()
})
afterAll(() => f?.close())

const users = async () =>
  (
    await f.authz.db.query<{ subject_id: string; username: string; claims: Record<string, unknown>; password_hash: string | null }>(
      `SELECT u.subject_id, u.username, u.claims, u.password_hash FROM users u
         JOIN federated_identities fi ON fi.subject_id = u.subject_id WHERE fi.scheme = 'corp' AND fi.upstream_sub = 'up-alice'`,
    )
  ).rows

describe('signing in through the corp provider', () => {
  let firstSub: string

  it('goes upstream with PKCE S256, state and nonce, and comes back with a code for the app', async () => {
    const b = browser(f)
    const { back, verifier } = await signInThroughCorp(b)
    expect(back.statusCode).toBe(303)
    const cb = located(back)
    expect(`${cb.origin}${cb.pathname}`).toBe(WEB_CB)
    expect(cb.searchParams.get('state')).toBe('app-state')
    expect(cb.searchParams.get('iss')).toBe('https://authz.test')
    const res = await redeem(f, cb.searchParams.get('code')!, verifier)
    expect(res.statusCode).toBe(200)
    // amr is the upstream's own (this upstream signs people in with a password).
    const id = decodeJwt(res.json().id_token as string)
    const at = decodeJwt(res.json().access_token as string)
    const [user] = await users()
    firstSub = user!.subject_id
    expect(firstSub).toMatch(/^[0-9a-f-]{36}$/)
    expect(id).toMatchObject({
      sub: firstSub,
      idp: 'corp',
      amr: ['pwd'],
      name: 'Alice Upstream',
      email: 'alice@example.com',
      email_verified: true,
    })
    expect(at).toMatchObject({ sub: firstSub, idp: 'corp', amr: ['pwd'] })
    const introspection = await postFormBasic(
      f.authz.app,
      '/connect/introspect',
      { token: res.json().access_token as string },
      'web',
      'web-secret',
    )
    expect(introspection.json()).toMatchObject({ active: true, sub: firstSub, idp: 'corp' })
    expect(user).toEqual({
      subject_id: firstSub,
      username: 'corp:alice@example.com',
      password_hash: null,
      claims: { name: 'Alice Upstream', given_name: 'Alice', email: 'alice@example.com', email_verified: true, locale: 'en' },
    })
  })

  it('finds the same user the next time, with the upstream claims refreshed', async () => {
    await f.upstream.db.query(`UPDATE users SET claims = claims || '{"name": "Alice Renamed"}' WHERE username = 'alice'`)
    const b = browser(f)
    const { back, verifier } = await signInThroughCorp(b)
    const res = await redeem(f, located(back).searchParams.get('code')!, verifier)
    expect(decodeJwt(res.json().id_token as string)).toMatchObject({ sub: firstSub, idp: 'corp', name: 'Alice Renamed' })
    expect(await users()).toEqual([
      expect.objectContaining({ subject_id: firstSub, claims: expect.objectContaining({ name: 'Alice Renamed' }) }),
    ])
  })

  it('never links an upstream identity to a local user by email unless the provider allows it', async () => {
    const b = browser(f)
    const { back } = await signInThroughCorp(b, {}, 'carol', 'carol-up-pw')
    expect(back.statusCode).toBe(303)
    const { rows } = await f.authz.db.query(`SELECT subject_id FROM federated_identities WHERE upstream_sub = 'up-carol'`)
    expect(rows).toHaveLength(1)
    expect(rows[0]).not.toEqual({ subject_id: 'u-carol' })
  })
})

describe('the callback', () => {
  /** Signs in upstream and stops at the 303 that would bring the browser back to authz. */
  async function upstreamAnswer(b: ReturnType<typeof browser>) {
    const page = await b.follow('/account/sign-in')
    expect(page.statusCode).toBe(200)
    const toUpstream = await b.get('/federation/corp/challenge')
    const signInPage = await b.follow(located(toUpstream).href, (u) => u.pathname === '/account/sign-in')
    const signedIn = await b.signInUpstream(String(signInPage.headers.location))
    return b.follow(new URL(String(signedIn.headers.location), UPSTREAM).href, (u) => u.pathname === '/federation/corp/signin')
  }

  const sessions = async () => Number((await f.authz.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM user_sessions`)).rows[0]!.n)

  it('works once: the same answer again is refused with a page, and sets no session', async () => {
    const b = browser(f)
    const answer = await upstreamAnswer(b)
    const callback = located(answer)
    expect(callback.searchParams.get('iss')).toBe(UPSTREAM)
    const first = await b.get(callback.href)
    expect(first.statusCode).toBe(303)
    expect(located(first).pathname).toBe('/account')
    const before = await sessions()
    const again = await f.authz.app.inject({
      method: 'GET',
      url: `${callback.pathname}${callback.search}`,
      headers: { cookie: b.jars.authz },
    })
    expect(again.statusCode).toBe(400)
    expect(again.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(again.headers['set-cookie']).toBeUndefined()
    expect(again.body).toContain('The answer from Corporate sign-in does not belong to a sign-in started in this browser')
    expect(await sessions()).toBe(before)
  })

  // Race: the same answer delivered twice at once (a double click, a replaying attacker). The
  // request is consumed by one UPDATE, so over many trials exactly one of the two signs in.
  it('works once under a race: of two concurrent deliveries of one answer, exactly one starts a session', async () => {
    const outcomes: string[] = []
    for (let trial = 0; trial < 20; trial++) {
      const b = browser(f)
      const callback = located(await upstreamAnswer(b))
      const before = await sessions()
      const deliver = () =>
        f.authz.app.inject({ method: 'GET', url: `${callback.pathname}${callback.search}`, headers: { cookie: b.jars.authz } })
      const answers = await Promise.all([deliver(), deliver()])
      const codes = answers.map((a) => a.statusCode).sort()
      outcomes.push(`${codes.join(',')} +${(await sessions()) - before}`)
    }
    expect(outcomes.filter((o) => o !== '303,400 +1')).toEqual([])
  })

  it('refuses the answer in another browser, a made-up state and a missing one', async () => {
    const b = browser(f)
    const callback = located(await upstreamAnswer(b))
    const other = browser(f)
    await other.get('/federation/corp/challenge') // that browser has a binding cookie of its own
    const tampered = new URL(callback)
    tampered.searchParams.set('state', 'made-up')
    const missing = new URL(callback)
    missing.searchParams.delete('state')
    for (const [who, url] of [
      [other, callback],
      [b, tampered],
      [b, missing],
    ] as const) {
      const before = await sessions()
      const res = await f.authz.app.inject({ method: 'GET', url: `${url.pathname}${url.search}`, headers: { cookie: who.jars.authz } })
      expect(res.statusCode).toBe(400)
      expect(res.headers['set-cookie']).toBeUndefined()
      expect(res.body).toContain('This sign-in cannot be completed')
      expect(await sessions()).toBe(before)
    }
    // The right browser can still finish it.
    expect((await b.get(callback.href)).statusCode).toBe(303)
  })

  it('answers a browser arriving from the upstream site with a page that goes on, not a redirect', async () => {
    // The upstream's sign-in form's CSP form-action would block a redirect chain ending at the app.
    const b = browser(f)
    const callback = located(await upstreamAnswer(b))
    const res = await f.authz.app.inject({
      method: 'GET',
      url: `${callback.pathname}${callback.search}`,
      headers: { cookie: b.jars.authz, 'sec-fetch-site': 'cross-site' },
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-security-policy']).toBe(PAGE_CSP)
    expect(res.body).toContain('<meta http-equiv="refresh" content="0;url=/account">')
    expect(res.body).toContain('<a class="button primary" href="/account">Continue</a>')
    expect([res.headers['set-cookie']].flat().some((c) => String(c).startsWith('__Host-authz-session='))).toBe(true)
  })

  it.each([
    ['a changed signature', (t: string) => `${t.slice(0, -4)}${t.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`],
    [
      'a payload changed after signing (another sub)',
      (t: string) => {
        const [h, p, sig] = t.split('.')
        const claims = JSON.parse(Buffer.from(p!, 'base64url').toString()) as Record<string, unknown>
        return `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: 'up-mallory' })).toString('base64url')}.${sig}`
      },
    ],
  ])('refuses an ID token with %s: a page, no session', async (_name, change) => {
    const b = browser(f)
    const callback = located(await upstreamAnswer(b))
    const before = await sessions()
    f.tamper.idToken = change
    try {
      const res = await b.get(callback.href)
      expect(res.statusCode).toBe(400)
      expect(res.body).toContain('The answer from Corporate sign-in could not be verified, so it was not accepted.')
      expect(res.headers['set-cookie']).toBeUndefined()
      expect(await sessions()).toBe(before)
    } finally {
      f.tamper.idToken = undefined
    }
  })

  it('refuses an iss that is not the provider (RFC 9207 mix-up)', async () => {
    const b = browser(f)
    const callback = located(await upstreamAnswer(b))
    callback.searchParams.set('iss', 'https://evil.test')
    const res = await b.get(callback.href)
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('The answer from Corporate sign-in could not be verified')
    expect(res.headers['set-cookie']).toBeUndefined()
  })
})

describe('authz users links', () => {
  it("shows a federated user's link to the provider", async () => {
    const [user] = await users()
    const out: string[] = []
    const ctx = {
      out: (l: string) => void out.push(l),
      err: (l: string) => void out.push(l),
      stdin: process.stdin,
      clock: f.authz.clock,
      config: () => f.authz.config,
      db: async () => f.authz.db,
    }
    await usersCommand.run(['links', user!.username], ctx)
    expect(out).toEqual([
      'SCHEME  UPSTREAM SUB  LINKED                    LAST SIGN-IN',
      expect.stringMatching(/^corp {4}up-alice {6}\d{4}-\d\d-\d\dT[\d:.]+Z {2}\d{4}-\d\d-\d\dT[\d:.]+Z$/),
    ])
    out.length = 0
    await usersCommand.run(['links', 'carol'], ctx)
    expect(out).toEqual(['user "carol" is linked to no identity provider'])
  })
})
