// A person who signs in through an upstream provider to approve a device or a CIBA request: the
// tokens the device or the bank's backend then get say so, as the authorization code flow's do
// (idp: the scheme; amr: the upstream's; auth_time: the sign-in), in the ID token, the access
// token and introspection.
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FORM, form } from '../../helpers/app.js'
import { csrfIn, postForm, postFormBasic } from '../../helpers/http.js'
import {
  browser,
  CIBA_GRANT,
  createFederation,
  DEVICE_GRANT,
  finishUpstream,
  linkTo,
  located,
  signInThroughCorp,
  UPSTREAM,
  type Federation,
  type Res,
} from './harness.js'

let f: Federation
beforeAll(async () => {
  f = await createFederation()
})
afterAll(() => f?.close())

/** The upstream signs alice in with a password and a one-time code. */
const UPSTREAM_AMR = ['pwd', 'otp']

/** Posts the decision from the page `shown` (at `path`) in browser `b`. */
function approveFrom(b: ReturnType<typeof browser>, path: string, shown: Res) {
  expect(shown.statusCode).toBe(200)
  return f.authz.app.inject({
    method: 'POST',
    url: path,
    headers: { ...FORM, cookie: b.jars.authz },
    payload: form({ csrf: csrfIn(shown.body), decision: 'approve' }),
  })
}

/** What the client sees: both tokens decoded, and the access token introspected by the client. */
async function seen(tokens: Res, clientId: string, secret: string) {
  expect(tokens.statusCode, tokens.body).toBe(200)
  const { access_token, id_token } = tokens.json<{ access_token: string; id_token: string }>()
  const introspection = await postFormBasic(f.authz.app, '/connect/introspect', { token: access_token }, clientId, secret)
  return { id: decodeJwt(id_token), at: decodeJwt(access_token), introspection: introspection.json<Record<string, unknown>>() }
}

/** The subject id and username authz gave alice of corp (her first sign-in there creates them). */
async function aliceOfCorp() {
  const { rows } = await f.authz.db.query<{ subject_id: string; username: string }>(
    `SELECT u.subject_id, u.username FROM users u JOIN federated_identities fi ON fi.subject_id = u.subject_id
      WHERE fi.scheme = 'corp' AND fi.upstream_sub = 'up-alice'`,
  )
  if (rows[0]) return rows[0]
  await signInThroughCorp(browser(f))
  return aliceOfCorp()
}

describe('the device flow', () => {
  it('issues tokens with idp and the upstream amr to a device approved after a sign-in through corp', async () => {
    const started = await postFormBasic(f.authz.app, '/connect/deviceauthorization', { scope: 'openid profile' }, 'tv', 'tv-secret')
    expect(started.statusCode).toBe(200)
    const { device_code, user_code } = started.json<{ device_code: string; user_code: string }>()
    const b = browser(f)
    const path = `/device?user_code=${encodeURIComponent(user_code)}`
    const signInPage = await b.follow(path)
    expect(signInPage.statusCode).toBe(200)
    const toUpstream = await b.get(linkTo(signInPage.body, 'Sign in with Corporate sign-in'))
    expect(located(toUpstream).origin).toBe(UPSTREAM)
    const decisionPage = await finishUpstream(b, toUpstream, 'alice', 'alice-up-pw', UPSTREAM_AMR)
    expect(decisionPage.body).toContain('Living room TV')
    expect((await approveFrom(b, path, decisionPage)).statusCode).toBe(200)
    // The upstream's auth_time: when alice authenticated there (by its clock, never later than authz's).
    const signedInAt = Math.floor(Math.min(f.upstream.clock.now(), f.authz.clock.now()) / 1000)
    f.authz.clock.advance(5)

    const tokens = await postFormBasic(f.authz.app, '/connect/token', { grant_type: DEVICE_GRANT, device_code }, 'tv', 'tv-secret')
    const { id, at, introspection } = await seen(tokens, 'tv', 'tv-secret')
    const { subject_id } = await aliceOfCorp()
    const sign = { sub: subject_id, idp: 'corp', amr: UPSTREAM_AMR, auth_time: signedInAt }
    expect(id).toMatchObject(sign)
    expect(at).toMatchObject(sign)
    expect(introspection).toMatchObject({ active: true, ...sign })
  })
})

describe('CIBA', () => {
  async function backchannel(params: Record<string, string>) {
    const { username } = await aliceOfCorp()
    const res = await postForm(f.authz.app, '/connect/ciba', {
      client_id: 'bank',
      client_secret: 'bank-secret',
      scope: 'openid profile',
      login_hint: username,
      ...params,
    })
    expect(res.statusCode).toBe(200)
    // The one pending request: the person's device would show its link (the log notifier's here).
    const { rows } = await f.authz.db.query<{ id: string }>(`SELECT id FROM ciba_requests WHERE status = 'pending'`)
    expect(rows).toHaveLength(1)
    return { authReqId: res.json<{ auth_req_id: string }>().auth_req_id, path: `/ciba/approve?request=${rows[0]!.id}` }
  }

  /** Approves in a new browser that signs in through corp, from the sign-in page's link or forwarded there. */
  async function approveThroughCorp(path: string) {
    const b = browser(f)
    let toUpstream = await b.follow(path, (u) => u.origin === UPSTREAM)
    if (toUpstream.statusCode === 200) toUpstream = await b.get(linkTo(toUpstream.body, 'Sign in with Corporate sign-in'))
    expect(located(toUpstream).origin).toBe(UPSTREAM)
    const decisionPage = await finishUpstream(b, toUpstream, 'alice', 'alice-up-pw', UPSTREAM_AMR)
    expect(decisionPage.body).toContain('Bank')
    expect((await approveFrom(b, path, decisionPage)).statusCode).toBe(200)
  }

  const poll = (authReqId: string) =>
    postFormBasic(f.authz.app, '/connect/token', { grant_type: CIBA_GRANT, auth_req_id: authReqId }, 'bank', 'bank-secret')

  it('issues tokens with the idp and amr of the sign-in that approved a request naming no provider', async () => {
    const { authReqId, path } = await backchannel({})
    await approveThroughCorp(path)
    const { id, at, introspection } = await seen(await poll(authReqId), 'bank', 'bank-secret')
    const sign = { sub: (await aliceOfCorp()).subject_id, idp: 'corp', amr: UPSTREAM_AMR }
    expect(id).toMatchObject(sign)
    expect(at).toMatchObject(sign)
    expect(introspection).toMatchObject({ active: true, ...sign })
  })

  it('keeps the provider a request named (acr_values idp:corp), with the amr of the sign-in there', async () => {
    const { authReqId, path } = await backchannel({ acr_values: 'idp:corp' })
    await approveThroughCorp(path)
    const { id, at, introspection } = await seen(await poll(authReqId), 'bank', 'bank-secret')
    const sign = { idp: 'corp', amr: UPSTREAM_AMR }
    expect(id).toMatchObject(sign)
    expect(at).toMatchObject(sign)
    expect(introspection).toMatchObject({ active: true, ...sign })
  })
})
