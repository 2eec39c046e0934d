// Public clients (requireClientSecret false) get what RFC 9700 §2.1.1 and §4.14.2 require whatever
// their seed says: PKCE at the authorization endpoint and the authorization_code grant even with
// requirePkce false; refresh tokens that rotate, with reuse revoking the family, even with reUse;
// and an absolute refresh lifetime of at most PUBLIC_CLIENT_REFRESH_TOKEN_LIFETIME (default 86400 s),
// while a confidential client keeps its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import { handleHash } from '../../../src/stores/columns.postgres.js'
import type { TestApp } from '../../helpers/app.js'
import { TEST_ISSUER } from '../../helpers/app.js'
import { postForm } from '../../helpers/http.js'
import { authorizeSeed, codeFor, createAuthorizeTestApp, located, redeem, session, SPA_CB, WEB_CB } from './harness.js'

const TURNCOAT_CB = 'https://turncoat.example/cb'
const CAP = 86_400

let authz: TestApp
beforeAll(async () => {
  authz = await createAuthorizeTestApp()
  const seed = authorizeSeed()
  const spa = seed.clients.find((c) => c.clientId === 'spa')!
  await applySeed(authz.db, {
    ...seed,
    clients: [
      ...seed.clients,
      // What a seed may say of a public client; neither setting is obeyed.
      { ...spa, clientId: 'spa-lax', requirePkce: false, refreshTokenUsage: 'reUse' as const },
      {
        ...spa,
        clientId: 'spa-sliding',
        refreshTokenExpiration: 'sliding' as const,
        slidingRefreshTokenLifetime: 40_000,
        absoluteRefreshTokenLifetime: 0,
      },
      { ...spa, clientId: 'spa-short', absoluteRefreshTokenLifetime: 500 },
      {
        clientId: 'turncoat',
        secrets: [{ value: 'turncoat-secret' }],
        requirePkce: false,
        allowedGrantTypes: ['authorization_code'],
        allowedScopes: ['openid'],
        redirectUris: [TURNCOAT_CB],
      },
    ],
  })
})
afterAll(() => authz?.close())

/** The client's credentials in the form: client_id alone for the public ones. */
const auth = (clientId: string): Record<string, string> =>
  clientId === 'web' ? { client_id: 'web', client_secret: 'web-secret' } : { client_id: clientId }

/** A refresh token from the code flow (with PKCE), for a fresh sign-in of alice. */
async function refreshTokenFor(clientId: string): Promise<string> {
  const cookie = await session(authz)
  const spa = clientId !== 'web'
  const { code, verifier } = await codeFor(
    authz,
    cookie,
    { client_id: clientId, redirect_uri: spa ? SPA_CB : WEB_CB, scope: 'openid orders.read offline_access' },
    spa ? 'spa' : 'web',
  )
  const res = await redeem(authz, { code, code_verifier: verifier, redirect_uri: spa ? SPA_CB : WEB_CB }, auth(clientId))
  expect(res.statusCode).toBe(200)
  return res.json().refresh_token
}
const refresh = (clientId: string, token: string) =>
  postForm(authz.app, '/connect/token', { grant_type: 'refresh_token', ...auth(clientId), refresh_token: token })
async function errorOf(p: ReturnType<typeof refresh>) {
  const res = await p
  return { status: res.statusCode, ...res.json() }
}
const expired = { status: 400, error: 'invalid_grant', error_description: 'refresh token expired' }

describe('PKCE for public clients, whatever requirePkce says', () => {
  it('an authorization request without code_challenge goes back with invalid_request, and no code is made', async () => {
    const cookie = await session(authz)
    const codes = async () =>
      (await authz.db.query(`SELECT count(*)::int AS n FROM persisted_grants WHERE kind = 'authorization_code'`)).rows[0]
    const before = await codes()
    const q = new URLSearchParams({ client_id: 'spa-lax', redirect_uri: SPA_CB, response_type: 'code', scope: 'openid', state: 'st-9' })
    const res = await authz.app.inject({ method: 'GET', url: `/connect/authorize?${q}`, headers: { cookie } })
    expect(res.statusCode).toBe(303)
    const back = located(res)
    expect(`${back.origin}${back.pathname}`).toBe(SPA_CB)
    expect(Object.fromEntries(back.searchParams)).toEqual({
      error: 'invalid_request',
      error_description: 'code_challenge is required: public clients must use PKCE with S256',
      state: 'st-9',
      iss: TEST_ISSUER,
    })
    expect(await codes()).toEqual(before)
  })

  it('a code issued without PKCE while the client was confidential is refused once it is public', async () => {
    const cookie = await session(authz)
    const res = await authz.app.inject({
      method: 'GET',
      url: `/connect/authorize?client_id=turncoat&response_type=code&scope=openid`,
      headers: { cookie },
    })
    const code = located(res).searchParams.get('code')!
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/)
    await applySeed(authz.db, {
      clients: [
        {
          clientId: 'turncoat',
          requireClientSecret: false,
          secrets: [],
          requirePkce: false,
          allowedGrantTypes: ['authorization_code'],
          allowedScopes: ['openid'],
          redirectUris: [TURNCOAT_CB],
        },
      ],
    })
    const redeemed = await redeem(authz, { code, redirect_uri: TURNCOAT_CB }, { client_id: 'turncoat' })
    expect(redeemed.statusCode).toBe(400)
    expect(redeemed.json()).toEqual({ error: 'invalid_grant', error_description: 'public clients must use PKCE' })
  })

  it('likewise a confidential client that turned requirePkce on since its code was issued', async () => {
    const turncoat = {
      clientId: 'turncoat-2',
      secrets: [{ value: 'turncoat-secret' }],
      allowedGrantTypes: ['authorization_code'],
      allowedScopes: ['openid'],
      redirectUris: [TURNCOAT_CB],
    }
    await applySeed(authz.db, { clients: [{ ...turncoat, requirePkce: false }] })
    const cookie = await session(authz)
    const res = await authz.app.inject({
      method: 'GET',
      url: `/connect/authorize?client_id=turncoat-2&response_type=code&scope=openid`,
      headers: { cookie },
    })
    const code = located(res).searchParams.get('code')!
    await applySeed(authz.db, { clients: [{ ...turncoat, requirePkce: true }] })
    const redeemed = await redeem(authz, { code, redirect_uri: TURNCOAT_CB }, { client_id: 'turncoat-2', client_secret: 'turncoat-secret' })
    expect(redeemed.statusCode).toBe(400)
    expect(redeemed.json()).toEqual({
      error: 'invalid_grant',
      error_description: 'the client requires PKCE and the code was issued without it',
    })
  })
})

describe('refresh tokens of public clients', () => {
  it('rotate even with reUse configured; the old one used again revokes the family', async () => {
    const first = await refreshTokenFor('spa-lax')
    const res = await refresh('spa-lax', first)
    expect(res.statusCode).toBe(200)
    const second = res.json()
    expect(second.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(second.refresh_token).not.toBe(first)
    expect(await errorOf(refresh('spa-lax', first))).toEqual({
      status: 400,
      error: 'invalid_grant',
      error_description: 'refresh token already used',
    })
    // Everything the family issued is dead: the rotated refresh token and its access token.
    expect(await errorOf(refresh('spa-lax', second.refresh_token))).toMatchObject({ status: 400, error: 'invalid_grant' })
    const userinfo = await authz.app.inject({
      method: 'GET',
      url: '/connect/userinfo',
      headers: { authorization: `Bearer ${second.access_token}` },
    })
    expect(userinfo.statusCode).toBe(401)
  })

  it(`live at most PUBLIC_CLIENT_REFRESH_TOKEN_LIFETIME (${CAP} s) from the sign-in, across rotations; a confidential client keeps its own lifetime`, async () => {
    expect(authz.config.publicClientRefreshTokenLifetime).toBe(CAP) // the default
    // spa-lax's own absoluteRefreshTokenLifetime is the default 2592000, as is web's.
    const [early, late, confidential] = [await refreshTokenFor('spa-lax'), await refreshTokenFor('spa-lax'), await refreshTokenFor('web')]
    authz.clock.advance(CAP - 1)
    const rotated = await refresh('spa-lax', early)
    expect(rotated.statusCode).toBe(200)
    authz.clock.advance(2) // cap + 1 s
    expect(await errorOf(refresh('spa-lax', late))).toEqual(expired)
    expect(await errorOf(refresh('spa-lax', rotated.json().refresh_token))).toEqual(expired)
    const kept = await refresh('web', confidential)
    expect(kept.statusCode).toBe(200)
    expect(kept.json().refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it('a family older than the cap gets no fresh day when its client turns public: it is expired', async () => {
    // A careless operator makes a confidential client public; its refresh tokens, which needed the
    // secret, now work with client_id alone, so a family that began more than a cap ago must be over.
    const rt = {
      clientId: 'turncoat-rt',
      allowedGrantTypes: ['authorization_code'],
      allowedScopes: ['openid', 'offline_access'],
      allowOfflineAccess: true,
      redirectUris: [TURNCOAT_CB],
    }
    await applySeed(authz.db, { clients: [{ ...rt, secrets: [{ value: 'turncoat-secret' }] }] })
    const cookie = await session(authz)
    const { code, verifier } = await codeFor(authz, cookie, {
      client_id: 'turncoat-rt',
      redirect_uri: TURNCOAT_CB,
      scope: 'openid offline_access',
    })
    const res = await redeem(
      authz,
      { code, code_verifier: verifier, redirect_uri: TURNCOAT_CB },
      { client_id: 'turncoat-rt', client_secret: 'turncoat-secret' },
    )
    expect(res.statusCode).toBe(200)
    authz.clock.advance(CAP + 60) // well within its own 30 days
    await applySeed(authz.db, { clients: [{ ...rt, requireClientSecret: false, secrets: [] }] })
    expect(await errorOf(refresh('turncoat-rt', res.json().refresh_token))).toEqual(expired)
  })

  it('a family stored before the cap (its own 30 days, no start recorded) counts from its sign-in', async () => {
    // What a public client's refresh token issued before these rules looks like: its client's own
    // absolute lifetime and nothing else; such a family's sign-in (auth_time) is when it began.
    const token = await refreshTokenFor('spa-lax')
    const month = authz.clock.now() + 2_592_000_000
    await authz.db.query(
      `UPDATE persisted_grants SET data = (data - 'startedAt') || jsonb_build_object('absoluteExpiresAt', $2::bigint), expires_at = to_timestamp($2::bigint / 1000.0) WHERE handle_hash = $1`,
      [handleHash(token), month],
    )
    authz.clock.advance(CAP + 1)
    expect(await errorOf(refresh('spa-lax', token))).toEqual(expired)
  })

  it('a shorter absoluteRefreshTokenLifetime of its own still holds', async () => {
    const [a, b] = [await refreshTokenFor('spa-short'), await refreshTokenFor('spa-short')]
    authz.clock.advance(499)
    expect((await refresh('spa-short', a)).statusCode).toBe(200)
    authz.clock.advance(2)
    expect(await errorOf(refresh('spa-short', b))).toEqual(expired)
  })

  it('sliding with no absolute lifetime (0): each use extends it, never past the cap', async () => {
    let token = await refreshTokenFor('spa-sliding')
    for (const step of [39_999, 39_999, CAP - 2 * 39_999 - 1]) {
      authz.clock.advance(step) // within the 40000 s window each time; the last one at cap - 1 s
      const res = await refresh('spa-sliding', token)
      expect(res.statusCode).toBe(200)
      token = res.json().refresh_token
    }
    authz.clock.advance(2) // cap + 1 s: the window had 39998 s left
    expect(await errorOf(refresh('spa-sliding', token))).toEqual(expired)
  })
})
