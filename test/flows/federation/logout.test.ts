// Logout of a session that began upstream, both ways. RP-initiated logout at authz goes through the
// upstream's end_session_endpoint (with the id_token_hint the upstream gave us) and comes back to
// the app's post_logout_redirect_uri with its state. A logout token from the upstream (Back-Channel
// Logout 1.0) ends the sessions it started here, and authz's own back-channel logouts to the apps follow;
// a token that fails validation is a 400 and ends nothing.
import { SignJWT, generateKeyPair } from 'jose'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { backchannelLogoutWorker, FORM, form } from '../../helpers/app.js'
import { browser, createFederation, located, redeem, signInThroughCorp, UPSTREAM, type Federation } from './harness.js'

let f: Federation
beforeAll(async () => {
  f = await createFederation()
})
afterAll(() => f?.close())

const count = async (app: Federation['authz'], sql: string) => Number((await app.db.query<{ n: number }>(sql)).rows[0]!.n)
const authzSessions = () => count(f.authz, `SELECT count(*)::int AS n FROM user_sessions WHERE idp = 'corp'`)
const upstreamSessions = () => count(f.upstream, `SELECT count(*)::int AS n FROM user_sessions WHERE subject_id = 'up-alice'`)

async function signedIn() {
  const b = browser(f)
  const { back, verifier } = await signInThroughCorp(b)
  const tokens = await redeem(f, located(back).searchParams.get('code')!, verifier)
  return { b, idToken: tokens.json().id_token as string }
}

describe('RP-initiated logout of a federated session', () => {
  it('signs out upstream and comes back to the app with its state', async () => {
    const { b, idToken } = await signedIn()
    expect(await authzSessions()).toBe(1)
    expect(await upstreamSessions()).toBe(1)
    const q = new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: 'https://web.example/bye', state: 'bye-state' })
    const res = await b.get(`/connect/endsession?${q}`)
    expect(res.statusCode).toBe(303)
    const upstream = located(res)
    expect(`${upstream.origin}${upstream.pathname}`).toBe(`${UPSTREAM}/connect/endsession`)
    expect(upstream.searchParams.get('post_logout_redirect_uri')).toBe('https://authz.test/federation/corp/signout-callback')
    expect(upstream.searchParams.get('id_token_hint')).toMatch(/^ey/)
    const back = await b.follow(upstream.href)
    expect(back.statusCode).toBe(303)
    expect(String(back.headers.location)).toBe('https://web.example/bye?state=bye-state')
    expect(await authzSessions()).toBe(0)
    expect(await upstreamSessions()).toBe(0)
  })

  it('the signout-callback goes nowhere it did not write itself', async () => {
    const res = await browser(f).get('/federation/corp/signout-callback?state=aHR0cHM6Ly9ldmlsLmV4YW1wbGU.forged')
    expect(res.statusCode).toBe(200)
    expect(res.headers.location).toBeUndefined()
    expect(res.body).toContain('You are signed out')
  })
})

describe('back-channel logout from the upstream', () => {
  it('ends the sessions the upstream session started here, and tells the apps', async () => {
    const { b } = await signedIn()
    expect(await authzSessions()).toBe(1)
    // The person signs out at the upstream itself: it sends authz a logout token.
    const account = await b.get(`${UPSTREAM}/account/sign-out`)
    const csrf = /name="csrf" value="([^"]+)"/.exec(account.body)![1]!
    const out = await f.upstream.app.inject({
      method: 'POST',
      url: '/account/sign-out',
      headers: { ...FORM, cookie: b.jars.upstream },
      payload: form({ csrf }),
    })
    expect(out.statusCode).toBe(200)
    // The upstream's worker delivers at once (woken by the queued row); authz answers 200 within 2 s.
    await backchannelLogoutWorker(f.upstream.app).runOnce()
    await vi.waitFor(
      async () =>
        expect(
          (
            await f.upstream.db.query(
              `SELECT status, http_status FROM backchannel_logouts WHERE subject_id = 'up-alice' ORDER BY id DESC LIMIT 1`,
            )
          ).rows,
        ).toEqual([{ status: 'delivered', http_status: 200 }]),
      { timeout: 2000 },
    )
    expect(await authzSessions()).toBe(0)
    const { rows } = await f.authz.db.query(`SELECT client_id, reason, status FROM backchannel_logouts ORDER BY id DESC LIMIT 1`)
    expect(rows).toEqual([{ client_id: 'web', reason: 'upstream', status: 'pending' }])
  })

  it('answers 400 to a token that fails validation, and ends nothing', async () => {
    await signedIn()
    const { privateKey } = await generateKeyPair('RS256')
    const forged = await new SignJWT({ sub: 'up-alice', events: { 'http://schemas.openid.net/event/backchannel-logout': {} } })
      .setProtectedHeader({ alg: 'RS256', kid: 'forged' })
      .setIssuer(UPSTREAM)
      .setAudience('authz-rp')
      .setIssuedAt()
      .setExpirationTime('2m')
      .setJti('forged-1')
      .sign(privateKey)
    for (const payload of [form({ logout_token: forged }), form({ logout_token: 'not-a-jwt' }), '']) {
      const res = await f.authz.app.inject({ method: 'POST', url: '/federation/corp/backchannel-logout', headers: FORM, payload })
      expect(res.statusCode).toBe(400)
      expect(res.headers['cache-control']).toBe('no-store')
      expect(res.json()).toEqual({ error: 'invalid_request', error_description: 'the logout token is not valid' })
    }
    expect(await authzSessions()).toBe(1)
  })
})
