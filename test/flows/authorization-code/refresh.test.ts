// Refresh tokens from the code flow, done as the seed fields say: permitted by allowOfflineAccess
// with offline_access (not by allowedGrantTypes), bound to the client, oneTimeOnly rotates and
// reUse keeps, absolute expiry kept across rotations, sliding expiry extended on use and never
// past the absolute one, scope narrows but never widens, a disabled user or a client that lost
// allowOfflineAccess gets invalid_grant.
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import type { TestApp } from '../../helpers/app.js'
import { postForm } from '../../helpers/http.js'
import { authorizeSeed, codeFor, createAuthorizeTestApp, redeem, session, SPA_CB } from './harness.js'

let authz: TestApp
beforeAll(async () => {
  authz = await createAuthorizeTestApp()
  const seed = authorizeSeed()
  const spa = seed.clients.find((c) => c.clientId === 'spa')!
  await applySeed(authz.db, {
    ...seed,
    clients: [
      ...seed.clients,
      {
        ...spa,
        clientId: 'sliding',
        redirectUris: [SPA_CB],
        refreshTokenExpiration: 'sliding' as const,
        slidingRefreshTokenLifetime: 100,
        absoluteRefreshTokenLifetime: 250,
      },
      { ...spa, clientId: 'absolute', redirectUris: [SPA_CB], absoluteRefreshTokenLifetime: 250 },
      // reUse is a confidential client's choice: a public client's tokens rotate whatever it says (public-clients.test.ts).
      {
        ...spa,
        clientId: 'reuse',
        requireClientSecret: true,
        secrets: [{ value: 'reuse-secret' }],
        redirectUris: [SPA_CB],
        refreshTokenUsage: 'reUse' as const,
      },
    ],
  })
})
afterAll(() => authz?.close())

/** The client's credentials in the form: client_id alone for the public ones. */
const auth = (clientId: string): Record<string, string> =>
  clientId === 'reuse' ? { client_id: clientId, client_secret: 'reuse-secret' } : { client_id: clientId }

async function refreshTokenFor(clientId: string, scope = 'openid orders.read offline_access'): Promise<string> {
  const cookie = await session(authz)
  const { code, verifier } = await codeFor(authz, cookie, { client_id: clientId, redirect_uri: SPA_CB, scope }, 'spa')
  const res = await redeem(authz, { code, code_verifier: verifier, redirect_uri: SPA_CB }, auth(clientId))
  expect(res.statusCode).toBe(200)
  return res.json().refresh_token
}
const refresh = (clientId: string, token: string, extra: Record<string, string> = {}) =>
  postForm(authz.app, '/connect/token', { grant_type: 'refresh_token', ...auth(clientId), refresh_token: token, ...extra })
const errorOf = async (p: ReturnType<typeof refresh>) => {
  const res = await p
  return { status: res.statusCode, ...res.json() }
}

describe('refresh tokens of the code flow', () => {
  it("work without refresh_token in allowedGrantTypes; another client's token is invalid_grant", async () => {
    const token = await refreshTokenFor('spa')
    expect(await errorOf(refresh('reuse', token))).toEqual({
      status: 400,
      error: 'invalid_grant',
      error_description: 'unknown refresh token',
    })
    const res = await refresh('spa', token)
    expect(res.statusCode).toBe(200)
    expect(res.json().refresh_token).not.toBe(token)
    // The refreshed ID token still names the session it came from (sid) and the sign-in's auth_time.
    const sid = (await authz.db.query<{ sid: string }>(`SELECT sid FROM user_sessions ORDER BY created_at DESC LIMIT 1`)).rows[0]!.sid
    expect(decodeJwt(res.json().id_token)).toMatchObject({ sub: 'u-alice', aud: 'spa', sid })
  })

  it('scope narrows, never widens', async () => {
    const token = await refreshTokenFor('spa', 'openid offline_access')
    expect(await errorOf(refresh('spa', token, { scope: 'openid orders.read offline_access' }))).toEqual({
      status: 400,
      error: 'invalid_scope',
      error_description: 'scope exceeds the original grant',
    })
    const narrowed = await refresh('spa', token, { scope: 'openid' })
    expect(narrowed.json()).toMatchObject({ scope: 'openid' })
  })

  it('reUse keeps the token (a confidential client)', async () => {
    const token = await refreshTokenFor('reuse')
    expect((await refresh('reuse', token)).json().refresh_token).toBe(token)
    expect((await refresh('reuse', token)).statusCode).toBe(200)
  })

  it('absolute: counted from the first issue, kept across rotations', async () => {
    let token = await refreshTokenFor('absolute')
    for (let i = 0; i < 2; i++) {
      authz.clock.advance(100)
      const res = await refresh('absolute', token)
      expect(res.statusCode).toBe(200)
      token = res.json().refresh_token
    }
    authz.clock.advance(50) // 250 s after the first issue
    expect(await errorOf(refresh('absolute', token))).toEqual({
      status: 400,
      error: 'invalid_grant',
      error_description: 'refresh token expired',
    })
  })

  it('sliding: each use extends it, never past the absolute lifetime', async () => {
    let token = await refreshTokenFor('sliding')
    for (let i = 0; i < 2; i++) {
      authz.clock.advance(90) // within the 100 s window: extended
      const res = await refresh('sliding', token)
      expect(res.statusCode).toBe(200)
      token = res.json().refresh_token
    }
    authz.clock.advance(70) // 250 s after the first issue: the absolute bound, though the window had 30 s left
    expect(await errorOf(refresh('sliding', token))).toEqual({
      status: 400,
      error: 'invalid_grant',
      error_description: 'refresh token expired',
    })
    const idle = await refreshTokenFor('sliding')
    authz.clock.advance(100) // unused for the whole window
    expect(await errorOf(refresh('sliding', idle))).toEqual({
      status: 400,
      error: 'invalid_grant',
      error_description: 'refresh token expired',
    })
  })

  it('a disabled user, or a client that lost allowOfflineAccess: invalid_grant', async () => {
    const token = await refreshTokenFor('spa')
    await authz.db.query(`UPDATE users SET enabled = false WHERE username = 'alice'`)
    expect(await errorOf(refresh('spa', token))).toEqual({
      status: 400,
      error: 'invalid_grant',
      error_description: 'the user is no longer active',
    })
    await authz.db.query(`UPDATE users SET enabled = true WHERE username = 'alice'`)
    await authz.db.query(`UPDATE clients SET allow_offline_access = false WHERE client_id = 'spa'`)
    try {
      expect(await errorOf(refresh('spa', token))).toEqual({
        status: 400,
        error: 'invalid_grant',
        error_description: 'the client may no longer use refresh tokens',
      })
    } finally {
      await authz.db.query(`UPDATE clients SET allow_offline_access = true WHERE client_id = 'spa'`)
    }
  })
})
