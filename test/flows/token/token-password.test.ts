// The password grant (RFC 6749 §4.3) at the token endpoint: the tokens, every error with its
// status and code, no user enumeration by answer or time, and the per-user lockout, with the
// clock moved rather than slept.
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySeed } from '../../../src/seed/apply.js'
import { basic, createTestApp, form, FORM, TEST_ISSUER, unknownUsernameDigest, type TestApp } from '../../helpers/app.js'
import { postForm } from '../../helpers/http.js'

const PASSPHRASE = 'correct horse battery staple '.repeat(17) // 493 characters

let authz: TestApp
beforeAll(async () => {
  authz = await createTestApp()
  await applySeed(authz.db, {
    apiScopes: [{ name: 'orders.read' }, { name: 'orders.write' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read', 'orders.write'], secrets: [{ value: 'orders-secret' }] }],
    identityResources: ['openid', 'profile', 'email', 'offline_access'],
    clients: [
      {
        clientId: 'legacy',
        secrets: [{ value: 'legacy-secret' }],
        allowedGrantTypes: ['password'],
        allowedScopes: ['openid', 'profile', 'orders.read', 'offline_access'],
        allowOfflineAccess: true,
      },
      {
        clientId: 'online',
        secrets: [{ value: 'online-secret' }],
        allowedGrantTypes: ['password'],
        allowedScopes: ['openid', 'orders.read', 'offline_access'],
      },
      {
        clientId: 'mobile',
        requireClientSecret: false,
        allowedGrantTypes: ['password'],
        allowedScopes: ['openid', 'orders.read'],
        accessTokenType: 'reference',
      },
      {
        clientId: 'backend',
        secrets: [{ value: 'backend-secret' }],
        allowedGrantTypes: ['client_credentials'],
        allowedScopes: ['orders.read'],
      },
    ],
    users: [
      { subjectId: 'alice-1', username: 'alice', password: 'alice-pw', claims: { name: 'Alice Example', email: 'alice@example.com' } },
      { subjectId: 'bob-1', username: 'bob', password: 'bob-pw', enabled: false },
      { subjectId: 'carol-1', username: 'carol', password: 'carol-pw' },
      { subjectId: 'dave-1', username: 'dave', password: 'dave-pw' },
      { subjectId: 'erin-1', username: `erin-${'n'.repeat(195)}`, password: PASSPHRASE },
    ],
  })
})
afterAll(() => authz.close())

const LEGACY = { authorization: basic('legacy', 'legacy-secret') }
const post = (params: Record<string, string>, headers: Record<string, string> = LEGACY) =>
  postForm(authz.app, '/connect/token', { grant_type: 'password', ...params }, headers)

type Res = Awaited<ReturnType<typeof post>>
function expectError(res: Res, status: number, body: Record<string, string>) {
  expect({ status: res.statusCode, body: res.json() }).toEqual({ status, body })
  expect(res.headers['cache-control']).toBe('no-store')
  expect(res.headers.pragma).toBe('no-cache')
}
const INCORRECT = { error: 'invalid_grant', error_description: 'the username or password is incorrect' }
const jwks = async () =>
  createLocalJWKSet((await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration/jwks' })).json())

describe('password grant: tokens', () => {
  it('issues an access token, an ID token with auth_time and amr pwd, and a refresh token', async () => {
    const res = await post({ username: 'alice', password: 'alice-pw', scope: 'openid profile orders.read offline_access' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers.pragma).toBe('no-cache')
    const body = res.json()
    expect(body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'openid profile orders.read offline_access',
      id_token: expect.any(String),
      refresh_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    })
    const now = Math.floor(authz.clock.now() / 1000)
    const at = await jwtVerify(body.access_token, await jwks(), {
      issuer: TEST_ISSUER,
      typ: 'at+jwt',
      currentDate: new Date(authz.clock.now()),
    })
    expect(at.payload).toEqual({
      iss: TEST_ISSUER,
      sub: 'alice-1',
      client_id: 'legacy',
      aud: 'orders-api',
      scope: 'openid profile orders.read offline_access',
      auth_time: now,
      amr: ['pwd'],
      jti: expect.any(String),
      iat: now,
      nbf: now,
      exp: now + 3600,
    })
    const id = await jwtVerify(body.id_token, await jwks(), {
      issuer: TEST_ISSUER,
      audience: 'legacy',
      currentDate: new Date(authz.clock.now()),
    })
    expect(id.protectedHeader).toMatchObject({ alg: 'RS256', typ: 'JWT' })
    expect(id.payload).toEqual({
      iss: TEST_ISSUER,
      sub: 'alice-1',
      aud: 'legacy',
      iat: now,
      exp: now + 300,
      auth_time: now,
      amr: ['pwd'],
      at_hash: expect.any(String),
      name: 'Alice Example',
    })
    // The refresh token is stored by hash only, for alice and this client.
    const { rows } = await authz.db.query<{ client_id: string; subject_id: string; handle_hash: string }>(
      `SELECT client_id, subject_id, handle_hash FROM persisted_grants WHERE kind = 'refresh_token'`,
    )
    expect(rows).toEqual([{ client_id: 'legacy', subject_id: 'alice-1', handle_hash: expect.not.stringContaining(body.refresh_token) }])
  })

  it('no ID token without openid, no refresh token without offline_access; the client default scopes when scope is omitted', async () => {
    const res = await post({ username: 'alice', password: 'alice-pw', scope: 'orders.read' })
    expect(res.json()).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, scope: 'orders.read' })
    const omitted = await post({ username: 'alice', password: 'alice-pw' })
    expect(omitted.json()).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, scope: 'orders.read' })
  })

  it('takes usernames as long as the seed file allows and long passphrases', async () => {
    const res = await post({ username: `erin-${'n'.repeat(195)}`, password: PASSPHRASE, scope: 'orders.read' })
    expect(res.statusCode).toBe(200)
    expect(decodeJwt(res.json().access_token).sub).toBe('erin-1')
  })

  it('offline_access needs allowOfflineAccess, as in every flow: invalid_scope otherwise', async () => {
    expectError(
      await post(
        { username: 'alice', password: 'alice-pw', scope: 'openid offline_access' },
        { authorization: basic('online', 'online-secret') },
      ),
      400,
      { error: 'invalid_scope', error_description: 'scope offline_access is not allowed for this client or grant' },
    )
  })

  it('a public client may use it (RFC 6749 §4.3.2), here with a reference access token', async () => {
    const res = await post({ client_id: 'mobile', username: 'alice', password: 'alice-pw', scope: 'openid orders.read' }, {})
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({
      access_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'openid orders.read',
      id_token: expect.any(String),
    })
    const introspected = await authz.app.inject({
      method: 'POST',
      url: '/connect/introspect',
      headers: { ...FORM, authorization: basic('orders-api', 'orders-secret') },
      payload: form({ token: res.json().access_token }),
    })
    expect(introspected.json()).toMatchObject({ active: true, sub: 'alice-1', client_id: 'mobile', amr: ['pwd'], scope: 'orders.read' })
  })
})

describe('password grant: errors', () => {
  it('invalid_request when username or password is missing or empty', async () => {
    expectError(await post({ password: 'alice-pw' }), 400, {
      error: 'invalid_request',
      error_description: 'username is missing or invalid',
    })
    expectError(await post({ username: 'alice' }), 400, { error: 'invalid_request', error_description: 'password is missing or invalid' })
    expectError(await post({ username: '', password: 'alice-pw' }), 400, {
      error: 'invalid_request',
      error_description: 'parameter username is empty',
    })
    expectError(await post({ username: 'alice', password: 'x'.repeat(513) }), 400, {
      error: 'invalid_request',
      error_description: 'password is too long',
    })
    expectError(await post({ username: 'a'.repeat(201), password: 'alice-pw' }), 400, {
      error: 'invalid_request',
      error_description: 'username is too long',
    })
  })

  it('unauthorized_client for a client that does not list the grant type', async () => {
    expectError(await post({ username: 'alice', password: 'alice-pw' }, { authorization: basic('backend', 'backend-secret') }), 400, {
      error: 'unauthorized_client',
      error_description: 'the client may not use this grant type',
    })
  })

  it('invalid_scope and invalid_target before the password is checked: nothing is counted', async () => {
    expectError(await post({ username: 'dave', password: 'wrong', scope: 'orders.write' }), 400, {
      error: 'invalid_scope',
      error_description: 'scope holds a value this client may not request',
    })
    expectError(await post({ username: 'dave', password: 'wrong', resource: 'nowhere' }), 400, {
      error: 'invalid_target',
      error_description: 'unknown resource',
    })
    const { rows } = await authz.db.query(`SELECT 1 FROM failure_counters WHERE name = 'dave-1'`)
    expect(rows).toHaveLength(0)
  })

  it('wrong password, unknown user and disabled user get the same answer, each after one counted failure', async () => {
    const answers = await Promise.all([
      post({ username: 'alice', password: 'wrong' }),
      post({ username: 'nobody', password: 'alice-pw' }),
      post({ username: 'bob', password: 'bob-pw' }),
    ])
    for (const res of answers) expectError(res, 400, INCORRECT)
    const strip = (r: Res) => ({ ...r.headers, 'x-request-id': undefined, date: undefined })
    expect(strip(answers[1])).toEqual(strip(answers[0]))
    expect(strip(answers[2])).toEqual(strip(answers[0]))
    expect(answers[1].body).toBe(answers[0].body)
    const nobody = await unknownUsernameDigest(authz.db, 'nobody')
    const { rows } = await authz.db.query(
      `SELECT name, failures FROM failure_counters WHERE name IN ('alice-1', $1, 'bob-1') ORDER BY source, name`,
      [nobody],
    )
    expect(rows).toEqual([
      { name: 'alice-1', failures: 1 },
      { name: 'bob-1', failures: 1 },
      { name: nobody, failures: 1 },
    ])
    expect((await post({ username: 'alice', password: 'alice-pw', scope: 'orders.read' })).statusCode).toBe(200) // forgets alice's failure
  })

  it('takes the same time for a wrong password, an unknown user and a disabled user (one scrypt each)', async () => {
    const cases = {
      wrong: { username: 'alice', password: 'nope' },
      unknown: { username: 'nobody-else', password: 'nope' },
      disabled: { username: 'bob', password: 'nope' },
    }
    const times: Record<string, number[]> = { wrong: [], unknown: [], disabled: [] }
    for (let round = 0; round < 7; round++) {
      for (const [name, params] of Object.entries(cases)) {
        const started = performance.now()
        expectError(await post(params), 400, INCORRECT)
        times[name]!.push(performance.now() - started)
      }
    }
    await post({ username: 'alice', password: 'alice-pw', scope: 'orders.read' }) // forget alice's failures
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
    const [wrong, unknown, disabled] = [median(times.wrong!), median(times.unknown!), median(times.disabled!)]
    // Skipping the password hash for an unknown or disabled user would make it many times faster.
    for (const m of [unknown, disabled]) {
      expect(m / wrong).toBeGreaterThan(0.5)
      expect(m / wrong).toBeLessThan(2)
    }
  })

  it('logs each failure without the password', async () => {
    authz.logs.length = 0
    await post({ username: 'nobody', password: 'Secret-Guess-42' })
    const lines = authz.logs.map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(lines.filter((l) => l.msg === 'sign-in failed')).toEqual([
      expect.objectContaining({
        username_hash: await unknownUsernameDigest(authz.db, 'nobody'),
        client_id: 'legacy',
        address: '127.0.0.1',
        reason: 'unknown_user',
      }),
    ])
    expect(authz.logs.join('\n')).not.toContain('Secret-Guess-42')
  })
})

describe('password grant: lockout (LOCKOUT_THRESHOLD 10, LOCKOUT_DURATION 300)', () => {
  it('after 10 failures even the right password gets invalid_grant at once, until the lock ends', async () => {
    for (let i = 0; i < 10; i++) expectError(await post({ username: 'carol', password: `guess-${i}` }), 400, INCORRECT)
    // No password hash while locked: the fastest locked answer beats the fastest wrong password.
    const timed = async (params: Record<string, string>) => {
      const started = performance.now()
      expectError(await post(params), 400, INCORRECT)
      return performance.now() - started
    }
    const locked: number[] = []
    const wrong: number[] = []
    for (let i = 0; i < 3; i++) {
      locked.push(await timed({ username: 'carol', password: 'carol-pw' }))
      wrong.push(await timed({ username: 'alice', password: 'nope' }))
    }
    expect(Math.min(...locked)).toBeLessThan(Math.min(...wrong))
    expect((await post({ username: 'alice', password: 'alice-pw', scope: 'orders.read' })).statusCode).toBe(200) // forget alice's failures
    const failures = authz.logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'sign-in failed' && l.username === 'carol')
    expect(failures.at(-1)).toMatchObject({ reason: 'locked', client_id: 'legacy' })

    authz.clock.advance(299)
    expectError(await post({ username: 'carol', password: 'carol-pw' }), 400, INCORRECT)
    authz.clock.advance(1)
    const res = await post({ username: 'carol', password: 'carol-pw', scope: 'orders.read' })
    expect(res.statusCode).toBe(200)
    expect(decodeJwt(res.json().access_token)).toMatchObject({ sub: 'carol-1', amr: ['pwd'] })
  })

  it('an unknown username locks after as many failures, so a lock reveals nothing', async () => {
    for (let i = 0; i < 10; i++) expectError(await post({ username: 'mallory', password: `guess-${i}` }), 400, INCORRECT)
    authz.logs.length = 0
    expectError(await post({ username: 'mallory', password: 'anything' }), 400, INCORRECT)
    const lines = authz.logs.map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(lines.filter((l) => l.msg === 'sign-in failed')).toEqual([
      expect.objectContaining({ username_hash: await unknownUsernameDigest(authz.db, 'mallory'), reason: 'locked' }),
    ])
  })
})

describe('password grant: unknown usernames', () => {
  // The attack: a person types their password into the username field. Kept as typed, it would
  // sit in the audit log and in failure_counters for the lockout period, for anyone who reads them.
  it('counts and logs a name no account has only by its keyed hash, with the same lockout on every replica', async () => {
    const typed = 'Tr0ub4dor&3-typed-as-username'
    const replica = await createTestApp({ testDb: authz.testDb })
    try {
      replica.clock.set(authz.clock.now())
      authz.logs.length = 0
      replica.logs.length = 0
      const on = (app: TestApp) =>
        app.app.inject({
          method: 'POST',
          url: '/connect/token',
          headers: { ...FORM, ...LEGACY },
          payload: form({ grant_type: 'password', username: typed, password: 'x' }),
        })
      for (let i = 0; i < 10; i++) expectError(await on(i % 2 ? replica : authz), 400, INCORRECT)
      expectError(await on(replica), 400, INCORRECT)
      const lines = [...authz.logs, ...replica.logs]
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.msg === 'sign-in failed')
      expect(lines.map((l) => l.reason)).toEqual([...Array<string>(10).fill('unknown_user'), 'locked'])
      const hash = await unknownUsernameDigest(authz.db, typed)
      expect(hash).toMatch(/^[A-Za-z0-9_-]{43}$/)
      for (const l of lines) {
        expect(l).toMatchObject({ username_hash: hash, client_id: 'legacy' })
        expect(l).not.toHaveProperty('username')
      }
      expect([...authz.logs, ...replica.logs].join('\n')).not.toContain('Tr0ub4dor')
      const { rows } = await authz.db.query(
        `SELECT name, source, failures, blocks FROM failure_counters WHERE source = 'unknown-username' AND name = $1`,
        [hash],
      )
      expect(rows).toEqual([{ name: hash, source: 'unknown-username', failures: 0, blocks: 1 }])
      const leaked = await authz.db.query(`SELECT count(*)::int AS n FROM failure_counters WHERE strpos(name, 'Tr0ub4dor') > 0`)
      expect(leaked.rows).toEqual([{ n: 0 }])
    } finally {
      await replica.close()
    }
  })
})

describe('discovery', () => {
  it('lists the password grant', async () => {
    const doc = (await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json()
    expect(doc.grant_types_supported).toContain('password')
  })
})
