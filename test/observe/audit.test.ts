// Audit events: one line per security-relevant outcome in the documented schema (docs/operate.md,
// "Audit events"), each with client id, subject, grant and source address where they apply, counted
// in the metrics too, and never a secret, a token or a password in the output.
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AUDIT_EVENTS } from '../../src/observe/audit.js'
import { applySeed } from '../../src/seed/apply.js'
import { basic, unknownUsernameDigest, FORM, form } from '../helpers/app.js'
import { decide, lastRequestId, signIn } from '../flows/ciba/approve-helper.js'
import { CIBA, createCibaTestApp, type CibaTestApp } from '../flows/ciba/harness.js'
import { parseMetrics, series } from './prometheus.js'

const FROM = '198.51.100.7'
const AUDITOR = { client_id: 'auditor', client_secret: 'Auditor-Secret-91f2' }
const SECRETS = [
  'Auditor-Secret-91f2',
  'cc-secret',
  'Wrong-Secret-5b1e',
  'alice-pw',
  'bob-pw',
  'Bob-Guess-77aa',
  'Mallory-Guess-0c3d',
  'api-secret',
]

/** Every field the schema allows (docs/operate.md "Audit events"). */
const SCHEMA_FIELDS = new Set([
  'level',
  'time',
  'msg',
  'log',
  'audit_version',
  'event',
  'outcome',
  'client_id',
  'subject',
  'grant_type',
  'address',
  'request_id',
  'reason',
  'token_types',
  'access_token_format',
  'scope',
  'token_kind',
  'username',
  'username_hash',
  'locked_until',
  'lockouts',
  'retry_after',
  'kid',
  'alg',
  'ciba_request_id',
  'sid',
  'attempts',
  'session_end',
  'http_status',
])

let authz: CibaTestApp
const issued: string[] = [] // every token, auth_req_id and cookie the server handed out

beforeAll(async () => {
  authz = await createCibaTestApp({ env: { LOCKOUT_THRESHOLD: '3', CLIENT_AUTH_FAILURE_LIMIT: '2', METRICS_PORT: '0' } })
  await applySeed(authz.db, {
    clients: [
      {
        clientId: 'auditor',
        secrets: [{ value: AUDITOR.client_secret }],
        allowedGrantTypes: [CIBA, 'refresh_token', 'password'],
        allowedScopes: ['openid', 'profile', 'orders.read', 'offline_access'],
        allowOfflineAccess: true,
      },
    ],
  })
})
afterAll(() => authz.close())

type Line = Record<string, unknown>
const audit = (): Line[] => authz.logs.map((l) => JSON.parse(l) as Line).filter((l) => l.log === 'audit')

async function token(params: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await authz.app.inject({
    method: 'POST',
    url: '/connect/token',
    remoteAddress: FROM,
    headers: { ...FORM, ...headers },
    payload: form(params),
  })
  const body = res.json<Record<string, string>>()
  for (const k of ['access_token', 'refresh_token', 'id_token']) if (body[k]) issued.push(body[k])
  return { res, body }
}

/** Runs `fn` and returns the audit lines it wrote (the log is kept whole for the final check). */
async function during(fn: () => Promise<unknown>): Promise<Line[]> {
  const from = authz.logs.length
  await fn()
  return authz.logs
    .slice(from)
    .map((l) => JSON.parse(l) as Line)
    .filter((l) => l.log === 'audit')
}

describe('audit events', () => {
  it('a token issued: client, grant, address, request id, what was issued', async () => {
    const events = await during(async () => {
      const { res } = await token(
        { grant_type: 'client_credentials', scope: 'orders.read' },
        { authorization: basic('cc-only', 'cc-secret'), 'x-request-id': 'req-cc-1' },
      )
      expect(res.statusCode).toBe(200)
    })
    expect(events).toEqual([
      {
        level: 30,
        time: expect.any(String),
        msg: 'token issued',
        log: 'audit',
        audit_version: 1,
        event: 'token.issued',
        outcome: 'success',
        client_id: 'cc-only',
        grant_type: 'client_credentials',
        address: FROM,
        request_id: 'req-cc-1',
        scope: 'orders.read',
        token_types: ['access_token'],
        access_token_format: 'jwt',
      },
    ])
  })

  it('a client-authentication failure: client, address, reason', async () => {
    const events = await during(async () => {
      const { res } = await token({ grant_type: 'client_credentials' }, { authorization: basic('cc-only', 'Wrong-Secret-5b1e') })
      expect(res.statusCode).toBe(401)
    })
    expect(events).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'client authentication rejected',
        event: 'client.auth_failed',
        outcome: 'failure',
        client_id: 'cc-only',
        address: FROM,
        reason: 'bad_secret',
      }),
    ])
  })

  it('a client blocked after too many failures, and refused while blocked', async () => {
    const events = await during(async () => {
      for (let i = 0; i < 2; i++)
        await token({ grant_type: 'client_credentials' }, { authorization: basic('cc-only', 'Wrong-Secret-5b1e') })
    })
    expect(events.map((e) => [e.event, e.reason])).toEqual([
      ['client.auth_failed', 'bad_secret'],
      ['client.blocked', 'too_many_failures'],
      ['client.auth_failed', 'blocked'],
    ])
    expect(events[1]).toMatchObject({
      level: 40,
      msg: 'client authentication blocked',
      outcome: 'failure',
      client_id: 'cc-only',
      address: FROM,
      lockouts: 1,
      locked_until: new Date(authz.clock.now() + 60_000).toISOString(),
    })
    expect(events[2]).toMatchObject({ client_id: 'cc-only', address: FROM, retry_after: 60 })
  })

  it('CIBA: requested, sign-in, approved or denied, the tokens; then refresh rotated, and the family revoked on reuse', async () => {
    const start = () =>
      authz.app.inject({
        method: 'POST',
        url: '/connect/ciba',
        remoteAddress: FROM,
        headers: FORM,
        payload: form({ ...AUDITOR, scope: 'openid offline_access orders.read', login_hint: 'alice' }),
      })
    let authReqId = ''
    const requested = await during(async () => {
      const res = await start()
      expect(res.statusCode).toBe(200)
      authReqId = res.json().auth_req_id
      issued.push(authReqId)
    })
    const id = await lastRequestId(authz)
    expect(requested).toEqual([
      expect.objectContaining({
        event: 'ciba.requested',
        outcome: 'success',
        client_id: 'auditor',
        subject: 'u-alice',
        grant_type: CIBA,
        address: FROM,
        scope: 'openid orders.read offline_access',
        ciba_request_id: id,
      }),
    ])

    const approved = await during(async () => expect((await decide(authz, id, 'approve')).statusCode).toBe(200))
    expect(approved).toEqual([
      expect.objectContaining({
        event: 'signin.succeeded',
        outcome: 'success',
        username: 'alice',
        subject: 'u-alice',
        client_id: 'auditor',
        address: '127.0.0.1',
      }),
      expect.objectContaining({
        event: 'ciba.approved',
        outcome: 'success',
        client_id: 'auditor',
        subject: 'u-alice',
        grant_type: CIBA,
        address: '127.0.0.1',
        ciba_request_id: id,
      }),
    ])

    await start()
    const denyId = await lastRequestId(authz)
    const denied = await during(async () => expect((await decide(authz, denyId, 'deny')).statusCode).toBe(200))
    expect(denied.map((e) => e.event)).toEqual(['signin.succeeded', 'ciba.denied'])
    expect(denied[1]).toMatchObject({
      outcome: 'failure',
      client_id: 'auditor',
      subject: 'u-alice',
      reason: 'user_denied',
      ciba_request_id: denyId,
    })

    let first: Record<string, string> = {}
    const polled = await during(async () => {
      const r = await token({ ...AUDITOR, grant_type: CIBA, auth_req_id: authReqId })
      expect(r.res.statusCode).toBe(200)
      first = r.body
    })
    expect(polled).toEqual([
      expect.objectContaining({
        event: 'token.issued',
        client_id: 'auditor',
        subject: 'u-alice',
        grant_type: CIBA,
        address: FROM,
        token_types: ['access_token', 'refresh_token', 'id_token'],
        access_token_format: 'jwt',
      }),
    ])
    expect(first.refresh_token).toBeDefined()

    const refreshed = await during(async () => {
      const r = await token(
        { ...AUDITOR, grant_type: 'refresh_token', refresh_token: first.refresh_token! },
        { 'x-request-id': 'req-refresh' },
      )
      expect(r.res.statusCode).toBe(200)
    })
    expect(refreshed).toEqual([
      expect.objectContaining({
        event: 'token.refreshed',
        outcome: 'success',
        client_id: 'auditor',
        subject: 'u-alice',
        grant_type: 'refresh_token',
        address: FROM,
        request_id: 'req-refresh',
      }),
      expect.objectContaining({
        event: 'token.issued',
        client_id: 'auditor',
        subject: 'u-alice',
        grant_type: 'refresh_token',
        request_id: 'req-refresh',
      }),
    ])

    const reused = await during(async () => {
      const r = await token({ ...AUDITOR, grant_type: 'refresh_token', refresh_token: first.refresh_token! })
      expect(r.body).toEqual({ error: 'invalid_grant', error_description: 'refresh token already used' })
    })
    expect(reused).toEqual([
      {
        level: 40,
        time: expect.any(String),
        msg: 'grant family revoked: a one-time artefact was used again',
        log: 'audit',
        audit_version: 1,
        event: 'grant.family_revoked',
        outcome: 'failure',
        client_id: 'auditor',
        subject: 'u-alice',
        grant_type: 'refresh_token',
        address: FROM,
        request_id: expect.any(String),
        reason: 'reuse',
      },
    ])
  })

  it('a sign-in failure on the page: the username typed, the client, the address', async () => {
    await authz.app.inject({
      method: 'POST',
      url: '/connect/ciba',
      headers: FORM,
      payload: form({ ...AUDITOR, scope: 'openid', login_hint: 'alice' }),
    })
    const id = await lastRequestId(authz)
    const events = await during(async () => expect((await signIn(authz, id, 'alice', 'Mallory-Guess-0c3d')).res.statusCode).toBe(401))
    expect(events).toEqual([
      expect.objectContaining({
        event: 'signin.failed',
        outcome: 'failure',
        username: 'alice',
        subject: 'u-alice',
        client_id: 'auditor',
        address: '127.0.0.1',
        reason: 'bad_password',
      }),
    ])
  })

  it('revocation of an access token and of a refresh token', async () => {
    const { body } = await token({
      ...AUDITOR,
      grant_type: 'password',
      username: 'alice',
      password: 'alice-pw',
      scope: 'openid offline_access',
    })
    const revoke = (tok: string) =>
      authz.app.inject({
        method: 'POST',
        url: '/connect/revocation',
        remoteAddress: FROM,
        headers: FORM,
        payload: form({ ...AUDITOR, token: tok }),
      })
    const events = await during(async () => {
      expect((await revoke(body.access_token!)).statusCode).toBe(200)
      expect((await revoke(body.refresh_token!)).statusCode).toBe(200)
      expect((await revoke('not-a-token-of-ours')).statusCode).toBe(200) // nothing revoked: nothing audited
    })
    expect(events).toEqual([
      expect.objectContaining({
        event: 'token.revoked',
        outcome: 'success',
        client_id: 'auditor',
        subject: 'u-alice',
        token_kind: 'access_token',
        address: FROM,
      }),
      expect.objectContaining({
        event: 'token.revoked',
        outcome: 'success',
        client_id: 'auditor',
        subject: 'u-alice',
        token_kind: 'refresh_token',
        address: FROM,
      }),
    ])
  })

  it('sign-in failures and the lockout (password grant), an unknown username too', async () => {
    const events = await during(async () => {
      for (let i = 0; i < 3; i++) await token({ ...AUDITOR, grant_type: 'password', username: 'bob', password: 'Bob-Guess-77aa' })
      await token({ ...AUDITOR, grant_type: 'password', username: 'bob', password: 'bob-pw' })
      await token({ ...AUDITOR, grant_type: 'password', username: 'mallory', password: 'Mallory-Guess-0c3d' })
    })
    const failed = { event: 'signin.failed', outcome: 'failure', username: 'bob', subject: 'u-bob', client_id: 'auditor', address: FROM }
    expect(events.map((e) => [e.event, e.reason])).toEqual([
      ['signin.failed', 'bad_password'],
      ['signin.failed', 'bad_password'],
      ['user.locked_out', 'too_many_failures'],
      ['signin.failed', 'bad_password'],
      ['signin.failed', 'locked'],
      ['signin.failed', 'unknown_user'],
    ])
    expect(events[0]).toMatchObject({ ...failed, level: 30 })
    expect(events[0]).not.toHaveProperty('grant_type')
    expect(events[2]).toMatchObject({
      level: 40,
      msg: 'account locked',
      event: 'user.locked_out',
      outcome: 'failure',
      username: 'bob',
      subject: 'u-bob',
      client_id: 'auditor',
      address: FROM,
      lockouts: 1,
      locked_until: new Date(authz.clock.now() + 300_000).toISOString(),
    })
    // A name no account has may be a password typed into the wrong field: only its keyed digest.
    expect(events[5]).toEqual(
      expect.objectContaining({ username_hash: await unknownUsernameDigest(authz.db, 'mallory'), client_id: 'auditor', address: FROM }),
    )
    expect(events[5]).not.toHaveProperty('subject')
    expect(events[5]).not.toHaveProperty('username')
  })

  it('a signing key rotated', async () => {
    let kid = ''
    const events = await during(async () => {
      kid = (await authz.app.authz.keys.rotate('ES256'))[0]!.kid
    })
    expect(events).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'signing key created',
        event: 'key.rotated',
        outcome: 'success',
        alg: 'ES256',
        kid,
        reason: 'rotation',
      }),
    ])
  })

  it('every line keeps to the schema, and no secret, token or password appears anywhere in the log', async () => {
    const events = audit()
    // Every event but the device flow's (test/flows/device/audit.test.ts), back-channel logout's
    // (test/flows/logout/backchannel-logout.test.ts), federation's (test/flows/federation/) and
    // the admin API's (test/admin/), the account page's (test/flows/account/), client
    // registration's (test/flows/registration/), CIBA delivery's (test/flows/ciba/delivery.test.ts),
    // second factors' (test/flows/second-factor/) and passkeys' (test/flows/sign-in/passkey.test.ts).
    expect(new Set(events.map((e) => e.event))).toEqual(
      new Set(
        Object.keys(AUDIT_EVENTS).filter(
          (e) =>
            !e.startsWith('device.') &&
            !e.startsWith('logout.') &&
            !e.startsWith('federation.') &&
            !e.startsWith('admin.') &&
            !e.startsWith('account.') &&
            !e.startsWith('registration.') &&
            !e.startsWith('ciba.deliver') &&
            !e.startsWith('factor.') &&
            !e.startsWith('passkey.') &&
            e !== 'signin.second_factor_failed' &&
            e !== 'signin.stepped_up',
        ),
      ),
    )
    for (const e of events) {
      expect(
        Object.keys(e).filter((k) => !SCHEMA_FIELDS.has(k)),
        String(e.event),
      ).toEqual([])
      expect(e).toMatchObject({ log: 'audit', audit_version: 1, outcome: AUDIT_EVENTS[e.event as keyof typeof AUDIT_EVENTS] })
    }
    const everything = authz.logs.join('\n')
    expect(issued.length).toBeGreaterThan(8)
    for (const secret of [...SECRETS, ...issued]) expect(everything).not.toContain(secret)
  })

  it('are counted in the metrics', async () => {
    const listener = await authz.app.authz.listenMetrics()
    const res = await fetch(`http://127.0.0.1:${(listener!.address() as AddressInfo).port}/metrics`)
    const m = parseMetrics(await res.text())
    expect(m.get(series('authz_sign_in_failures_total', { reason: 'bad_password' }))).toBe(4)
    expect(m.get(series('authz_sign_in_failures_total', { reason: 'locked' }))).toBe(1)
    expect(m.get(series('authz_sign_in_failures_total', { reason: 'unknown_user' }))).toBe(1)
    expect(m.get(series('authz_lockouts_total', { kind: 'user' }))).toBe(1)
    expect(m.get(series('authz_client_auth_failures_total', { reason: 'bad_secret' }))).toBe(2)
    expect(m.get(series('authz_client_auth_failures_total', { reason: 'blocked' }))).toBe(1)
    expect(m.get(series('authz_lockouts_total', { kind: 'client' }))).toBe(1)
    for (const [outcome, n] of [
      ['requested', 3],
      ['approved', 1],
      ['denied', 1],
      ['token_issued', 1],
    ] as const) {
      expect(m.get(series('authz_ciba_requests_total', { outcome })), outcome).toBe(n)
    }
    expect(m.get(series('authz_grant_families_revoked_total', { grant_type: 'refresh_token' }))).toBe(1)
    for (const tokenType of ['access_token', 'refresh_token', 'id_token']) {
      expect(m.get(series('authz_tokens_issued_total', { grant_type: CIBA, token_type: tokenType }))).toBe(1)
      expect(m.get(series('authz_tokens_issued_total', { grant_type: 'refresh_token', token_type: tokenType }))).toBe(1)
    }
    expect(m.get(series('authz_tokens_issued_total', { grant_type: 'client_credentials', token_type: 'access_token' }))).toBe(1)
    expect(m.get(series('authz_tokens_issued_total', { grant_type: 'password', token_type: 'access_token' }))).toBe(1) // bob's right password came after the lock
  })
})
