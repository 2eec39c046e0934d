// A code used twice (RFC 6749 §4.1.2: deny, and revoke the tokens already issued from it). The only
// second use that is spared inside CONCURRENT_REDEMPTION_MS is a true duplicate of the first
// request: the same client authentication and the same code_verifier (a client library that runs
// its callback twice). Any other second use inside the window is the replay of a stolen code, and
// the tokens the first redeemer got are revoked at once: the case where a thief redeemed first and
// the real client, a moment later, is the one who comes second.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import type { TestApp } from '../../helpers/app.js'
import { postForm, postFormBasic } from '../../helpers/http.js'
import { authorizeSeed, codeFor, createAuthorizeTestApp, pkcePair, redeem, session, SPA_CB } from './harness.js'

/** web's current secret, and an older one still valid during a rotation (the one that leaked). */
const WEB = { client_id: 'web', client_secret: 'web-secret' }
const LEAKED = { client_id: 'web', client_secret: 'web-old-secret' }

let authz: TestApp
let alice: string
beforeAll(async () => {
  authz = await createAuthorizeTestApp()
  const seed = authorizeSeed()
  await applySeed(authz.db, {
    ...seed,
    clients: seed.clients.map((c) =>
      c.clientId === 'web' ? { ...c, secrets: [{ value: 'web-secret' }, { value: 'web-old-secret' }] } : c,
    ),
  })
  alice = await session(authz)
  await authz.db.query(`INSERT INTO consents (subject_id, client_id, scopes, created_at, updated_at)
    VALUES ('u-alice', 'web', '{openid,profile,email,orders.read,offline_access}', now(), now())`)
})
afterAll(() => authz?.close())

const SCOPE = 'openid orders.read offline_access'
const introspect = (token: string) => postFormBasic(authz.app, '/connect/introspect', { token }, 'orders-api', 'api-secret')
const refresh = (token: string, auth: Record<string, string>) =>
  postForm(authz.app, '/connect/token', { grant_type: 'refresh_token', refresh_token: token, ...auth })

function expectError(res: Awaited<ReturnType<typeof redeem>>, description: string) {
  expect(res.statusCode).toBe(400)
  expect(res.headers['cache-control']).toBe('no-store')
  expect(res.json()).toEqual({ error: 'invalid_grant', error_description: description })
}

/** Every token of `body` is dead: the access token inactive at introspection, the refresh token unknown. */
async function expectRevoked(body: { access_token: string; refresh_token: string }, auth: Record<string, string>) {
  expect((await introspect(body.access_token)).json()).toEqual({ active: false })
  expectError(await refresh(body.refresh_token, auth), 'unknown refresh token')
}

describe('a second use inside the concurrency window that is not the same request revokes at once', () => {
  it('stolen code: the thief redeems first with a leaked client secret, the real client a moment later revokes what the thief got', async () => {
    const c = await codeFor(authz, alice, { scope: SCOPE })
    const thief = await redeem(authz, { code: c.code, code_verifier: c.verifier }, LEAKED)
    expect(thief.statusCode).toBe(200)
    authz.clock.advance(0.5) // well inside CONCURRENT_REDEMPTION_MS
    expectError(await redeem(authz, { code: c.code, code_verifier: c.verifier }, WEB), 'authorization code already used')
    await expectRevoked(thief.json(), LEAKED)
    // Revoking the family removed the code with it: a true duplicate of the thief's request gets nothing either.
    expectError(await redeem(authz, { code: c.code, code_verifier: c.verifier }, LEAKED), 'unknown authorization code')
  })

  it("stolen code: a second redemption with another code_verifier revokes the first redeemer's tokens", async () => {
    const c = await codeFor(authz, alice, { scope: SCOPE })
    const first = await redeem(authz, { code: c.code, code_verifier: c.verifier }, WEB)
    expect(first.statusCode).toBe(200)
    expectError(await redeem(authz, { code: c.code, code_verifier: pkcePair().verifier }, WEB), 'authorization code already used')
    await expectRevoked(first.json(), WEB)
  })

  it("stolen code: a second redemption without the code_verifier revokes the first redeemer's tokens", async () => {
    const c = await codeFor(authz, alice, { scope: SCOPE })
    const first = await redeem(authz, { code: c.code, code_verifier: c.verifier }, WEB)
    expect(first.statusCode).toBe(200)
    expectError(await redeem(authz, { code: c.code }, WEB), 'authorization code already used')
    await expectRevoked(first.json(), WEB)
  })

  it("stolen code: a second redemption naming another redirect URI revokes the first redeemer's tokens", async () => {
    const c = await codeFor(authz, alice, { scope: SCOPE })
    const first = await redeem(authz, { code: c.code, code_verifier: c.verifier }, WEB)
    expect(first.statusCode).toBe(200)
    expectError(
      await redeem(authz, { code: c.code, code_verifier: c.verifier, redirect_uri: 'https://web.example/other' }, WEB),
      'authorization code already used',
    )
    await expectRevoked(first.json(), WEB)
  })

  it('stolen code of a public client: another code_verifier inside the window revokes', async () => {
    const c = await codeFor(authz, alice, { scope: SCOPE }, 'spa')
    const spa = { client_id: 'spa' }
    const first = await redeem(authz, { code: c.code, code_verifier: c.verifier, redirect_uri: SPA_CB }, spa)
    expect(first.statusCode).toBe(200)
    expectError(
      await redeem(authz, { code: c.code, code_verifier: pkcePair().verifier, redirect_uri: SPA_CB }, spa),
      'authorization code already used',
    )
    await expectRevoked(first.json(), spa)
  })

  it('a true duplicate (same client authentication, same code_verifier) inside the window is refused without revoking', async () => {
    const c = await codeFor(authz, alice, { scope: SCOPE })
    const first = await redeem(authz, { code: c.code, code_verifier: c.verifier }, WEB)
    expect(first.statusCode).toBe(200)
    authz.clock.advance(1.9)
    expectError(
      await redeem(authz, { code: c.code, code_verifier: c.verifier }, WEB),
      'authorization code is being redeemed by another request',
    )
    expect((await introspect(first.json().access_token)).json()).toMatchObject({ active: true })
    // The redemption is recorded with the code as a digest; neither the secret nor the verifier is stored in clear.
    const { rows } = await authz.db.query<{ row: string; redemption_hash: string | null }>(
      `SELECT row_to_json(p)::text AS row, redemption_hash FROM persisted_grants p WHERE kind = 'authorization_code' AND consumed_at IS NOT NULL`,
    )
    expect(rows.length).toBeGreaterThan(0)
    for (const r of rows) {
      expect(r.redemption_hash).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(r.row).not.toContain('web-secret')
      expect(r.row).not.toContain(c.verifier)
    }
  })
})

describe('racing redemptions by two parties', () => {
  it(
    'the thief and the client redeem at once with different client authentication, 20 trials: no token survives',
    { timeout: 120_000 },
    async () => {
      const alive: string[] = []
      for (let trial = 0; trial < 20; trial++) {
        const c = await codeFor(authz, alice, { scope: SCOPE })
        const results = await Promise.all([LEAKED, WEB].map((auth) => redeem(authz, { code: c.code, code_verifier: c.verifier }, auth)))
        const ok = results.filter((r) => r.statusCode === 200)
        expect(ok.length).toBeLessThanOrEqual(1)
        for (const r of results.filter((r) => r.statusCode !== 200)) expect(r.json()).toMatchObject({ error: 'invalid_grant' })
        for (const r of ok) {
          const body = r.json()
          if ((await introspect(body.access_token)).json().active !== false) alive.push(`trial ${trial}: access token active`)
          if ((await refresh(body.refresh_token, WEB)).statusCode !== 400) alive.push(`trial ${trial}: refresh token works`)
        }
      }
      expect(alive).toEqual([])
    },
  )
})
