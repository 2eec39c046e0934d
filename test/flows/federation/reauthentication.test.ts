// prompt=login and max_age (OIDC Core §3.1.2.1) on a sign-in through an upstream provider: authz
// asks the upstream for the same, so the person authenticates there again, and the tokens carry
// the upstream's auth_time: when the person authenticated, not when authz heard of it (never
// later than authz's now). The two servers' clocks differ, as real ones do.
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  authorizeUrl,
  browser,
  createFederation,
  finishUpstream,
  linkTo,
  located,
  pkcePair,
  redeem,
  signInThroughCorp,
  UPSTREAM,
  WEB_CB,
  type Federation,
} from './harness.js'

let f: Federation
beforeAll(async () => {
  f = await createFederation()
})
afterAll(() => f?.close())

/** Both servers' clocks move on. */
function advance(seconds: number) {
  f.authz.clock.advance(seconds)
  f.upstream.clock.advance(seconds)
}

const upstreamNow = () => Math.floor(f.upstream.clock.now() / 1000)

/** The app's tokens for the code in `back`, decoded. */
async function tokens(back: Awaited<ReturnType<typeof signInThroughCorp>>['back'], verifier: string) {
  expect(back.statusCode).toBe(303)
  const cb = located(back)
  expect(`${cb.origin}${cb.pathname}`).toBe(WEB_CB)
  const res = await redeem(f, cb.searchParams.get('code')!, verifier)
  expect(res.statusCode).toBe(200)
  return { id: decodeJwt(res.json().id_token as string), at: decodeJwt(res.json().access_token as string) }
}

/** A browser signed in at both servers through corp, `ago` seconds before the test goes on. */
async function signedIn(ago: number) {
  const b = browser(f)
  await signInThroughCorp(b)
  const at = upstreamNow()
  advance(ago)
  return { b, at }
}

describe('auth_time of a federated sign-in', () => {
  it("is the upstream's: a person still signed in there is not authenticated again", async () => {
    const { b, at: upstreamSignIn } = await signedIn(300)
    // A new browser session here, the same one upstream: the upstream answers at once.
    const b2 = browser(f)
    b2.jars.upstream = b.jars.upstream
    const { verifier, challenge } = pkcePair()
    const page = await b2.follow(authorizeUrl({}, challenge))
    const back = await b2.follow(linkTo(page.body, 'Sign in with Corporate sign-in'))
    const { id, at } = await tokens(back, verifier)
    expect(id.auth_time).toBe(upstreamSignIn)
    expect(at.auth_time).toBe(upstreamSignIn)
    expect(upstreamSignIn).toBeLessThan(Math.floor(f.authz.clock.now() / 1000) - 299)
  })

  it("is never later than authz's now, whatever the upstream's clock says", async () => {
    f.upstream.clock.advance(20)
    try {
      const b = browser(f)
      const { back, verifier } = await signInThroughCorp(b)
      const { id, at } = await tokens(back, verifier)
      expect(id.auth_time).toBe(Math.floor(f.authz.clock.now() / 1000))
      expect(at.auth_time).toBe(Math.floor(f.authz.clock.now() / 1000))
    } finally {
      f.upstream.clock.advance(-20)
    }
  })
})

describe('asking for a new sign-in', () => {
  /** From the app's request to the 303 that sends the browser upstream. */
  async function toUpstream(b: ReturnType<typeof browser>, params: Record<string, string>, challenge: string) {
    const page = await b.follow(authorizeUrl(params, challenge))
    expect(page.statusCode).toBe(200)
    const res = await b.get(linkTo(page.body, 'Sign in with Corporate sign-in'))
    expect(located(res).origin).toBe(UPSTREAM)
    return res
  }

  it('passes prompt=login upstream: the person signs in there again, and auth_time is that sign-in', async () => {
    const { b } = await signedIn(60)
    const { verifier, challenge } = pkcePair()
    const res = await toUpstream(b, { prompt: 'login' }, challenge)
    expect(located(res).searchParams.get('prompt')).toBe('login')
    expect(located(res).searchParams.has('max_age')).toBe(false)
    const back = await finishUpstream(b, res)
    const { id, at } = await tokens(back, verifier)
    expect(id.auth_time).toBe(upstreamNow())
    expect(at.auth_time).toBe(upstreamNow())
  })

  it('passes max_age upstream: a sign-in there older than that is done again', async () => {
    const { b } = await signedIn(600)
    const { verifier, challenge } = pkcePair()
    const res = await toUpstream(b, { max_age: '300' }, challenge)
    expect(located(res).searchParams.get('max_age')).toBe('300')
    expect(located(res).searchParams.has('prompt')).toBe(false)
    const back = await finishUpstream(b, res)
    const { id } = await tokens(back, verifier)
    expect(id.auth_time).toBe(upstreamNow())
  })

  it('asks neither when the app did not', async () => {
    const res = await toUpstream(browser(f), {}, pkcePair().challenge)
    expect(located(res).searchParams.has('prompt')).toBe(false)
    expect(located(res).searchParams.has('max_age')).toBe(false)
  })
})
