// OpenID Connect Back-Channel Logout 1.0 (§2.4, §2.5, §2.8): when a session ends, each client used
// in it that registered a backChannelLogoutUri gets a POST with a signed logout token, from the
// outbox the session's end wrote, never while the person's page waits. An in-process receiver
// plays the clients; tokens are verified with jose against our JWKS.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createLocalJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet } from 'jose'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { PassThrough } from 'node:stream'
import { CliError, createContext } from '../../../src/cli/context.js'
import { UnavailableError } from '../../../src/errors.js'
import { usersCommand } from '../../../src/cli/users.js'
import { applySeed, validateSeed } from '../../../src/seed/apply.js'
import { createMetrics } from '../../../src/observe/metrics.js'
import { createBackchannelLogoutWorker, type BackchannelLogoutOptions } from '../../../src/flows/logout/backchannel-logout.js'
import { createPgBackchannelLogoutStore } from '../../../src/stores/backchannel-logouts.postgres.js'
import { createPgClientStore } from '../../../src/stores/clients.postgres.js'
import { createFreezableDb } from '../../helpers/faulty-db.js'
import { codeFor, redeem, session, signInAt, authorizeSeed } from '../authorization-code/harness.js'
import { backchannelLogoutWorker, createTestApp, TEST_ISSUER, type TestApp } from '../../helpers/app.js'

const EVENT = 'http://schemas.openid.net/event/backchannel-logout'

interface Received {
  path: string
  contentType: string | undefined
  body: string
  token: string
}

/** The clients' back-channel logout endpoints: records every POST; answers 200 unless told otherwise. */
function createReceiver() {
  const received: Received[] = []
  const answers = new Map<string, Array<number | 'hold'>>()
  const held: Array<(status: number) => void> = []
  let arrived: Array<{ test: () => boolean; resolve: () => void }> = []
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      const token = new URLSearchParams(body).get('logout_token') ?? ''
      received.push({ path: req.url ?? '', contentType: req.headers['content-type'], body, token })
      arrived = arrived.filter((w) => (w.test() ? (w.resolve(), false) : true))
      const answer = answers.get(req.url ?? '')?.shift() ?? 200
      if (answer === 'hold') held.push((status) => res.writeHead(status).end())
      else res.writeHead(answer).end()
    })
  })
  return {
    received,
    /** The next answers for a path, in order (then 200). 'hold': no answer until release(). */
    answer: (path: string, ...next: Array<number | 'hold'>) => answers.set(path, next),
    release: (status = 200) => held.splice(0).forEach((r) => r(status)),
    /** Resolves once `n` requests have arrived in all. */
    arrivals: (n: number) =>
      new Promise<void>((resolve) => (received.length >= n ? resolve() : arrived.push({ test: () => received.length >= n, resolve }))),
    /** Resolves once what has arrived makes `test` true (checked at each arrival). */
    until: (test: (all: Received[]) => boolean) =>
      new Promise<void>((resolve) => (test(received) ? resolve() : arrived.push({ test: () => test(received), resolve }))),
    async listen() {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
    reset() {
      received.length = 0
      answers.clear()
    },
  }
}

const receiver = createReceiver()
let authz: TestApp
let jwks: ReturnType<typeof createLocalJWKSet>

beforeAll(async () => {
  const base = await receiver.listen()
  // 2 s per attempt: a receiver that answers at once does so well within it on a loaded machine too;
  // the one test that needs an attempt to time out waits it once.
  authz = await createTestApp({ backchannelLogout: { timeoutMs: 2000, maxAttempts: 3, backoffMs: [5_000, 30_000] } })
  const seed = authorizeSeed()
  const withUri: Record<string, string> = { web: `${base}/logout/web`, spa: `${base}/logout/spa` } // nopkce has none
  for (const c of seed.clients) if (withUri[c.clientId]) Object.assign(c, { backChannelLogoutUri: withUri[c.clientId] })
  await applySeed(authz.db, seed)
  await authz.db.query(
    `INSERT INTO consents (subject_id, client_id, scopes, created_at, updated_at) VALUES ('u-alice', 'web', '{openid,profile}', now(), now()), ('u-bob', 'web', '{openid,profile}', now(), now())`,
  )
  jwks = createLocalJWKSet((await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration/jwks' })).json<JSONWebKeySet>())
})
afterAll(async () => {
  await authz?.close()
  await receiver.close()
})
beforeEach(async () => {
  await backchannelLogoutWorker(authz.app).runOnce() // nothing left over from the test before
  receiver.reset()
})

async function cli(args: string[]) {
  const out: string[] = []
  await usersCommand.run(
    args,
    createContext({ out: (l) => out.push(l), err: () => {}, stdin: new PassThrough(), clock: authz.clock }, {}, { db: authz.db }),
  )
  return out
}

const worker = () => backchannelLogoutWorker(authz.app)
const sidOf = (idToken: string) => decodeJwt(idToken).sid as string

/** Alice signed in, a code (and ID token) for `web`, codes for the other clients given. */
async function signedIn(clients: string[] = []) {
  const cookie = await session(authz)
  const { code, verifier } = await codeFor(authz, cookie)
  const idToken = (await redeem(authz, { code, code_verifier: verifier })).json().id_token as string
  for (const c of clients)
    await codeFor(
      authz,
      cookie,
      c === 'nopkce' ? { client_id: 'nopkce', redirect_uri: 'https://nopkce.example/cb', scope: 'openid' } : {},
      c,
    )
  return { cookie, idToken, sid: sidOf(idToken) }
}

const logout = (cookie: string, idToken: string) =>
  authz.app.inject({ method: 'GET', url: `/connect/endsession?${new URLSearchParams({ id_token_hint: idToken })}`, headers: { cookie } })

const rows = async (sid: string) =>
  (
    await authz.db.query<{
      client_id: string
      status: string
      attempts: number
      last_error: string | null
      http_status: number | null
      reason: string
    }>('SELECT client_id, status, attempts, last_error, http_status, reason FROM backchannel_logouts WHERE sid = $1 ORDER BY client_id', [
      sid,
    ])
  ).rows

const audits = (event: string) => authz.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === event)

describe('back-channel logout', () => {
  it('discovery says logout tokens are sent, with sid', async () => {
    const doc = (await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json()
    expect(doc).toMatchObject({ backchannel_logout_supported: true, backchannel_logout_session_supported: true })
  })

  it('RP-initiated logout: every client used in the session with a URI gets one signed logout token, and no one else', async () => {
    const bob = await session(authz, 'bob', 'bob-pw')
    await codeFor(authz, bob) // another session's client use concerns another session
    const { cookie, idToken, sid } = await signedIn(['spa', 'nopkce'])
    const res = await logout(cookie, idToken)
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('signed out')

    await worker().runOnce()
    expect(receiver.received.map((r) => r.path).sort()).toEqual(['/logout/spa', '/logout/web'])
    for (const r of receiver.received) {
      expect(r.contentType).toBe('application/x-www-form-urlencoded')
      expect([...new URLSearchParams(r.body).keys()]).toEqual(['logout_token'])
      const aud = r.path.slice('/logout/'.length)
      const { payload, protectedHeader } = await jwtVerify(r.token, jwks, {
        issuer: TEST_ISSUER,
        audience: aud,
        typ: 'logout+jwt',
        currentDate: new Date(authz.clock.now()),
      })
      expect(protectedHeader).toMatchObject({ alg: 'RS256', typ: 'logout+jwt' })
      const iat = Math.floor(authz.clock.now() / 1000)
      expect(payload).toEqual({
        iss: TEST_ISSUER,
        sub: 'u-alice',
        aud,
        iat,
        exp: iat + 120,
        jti: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
        sid,
        events: { [EVENT]: {} },
      })
      expect(payload).not.toHaveProperty('nonce')
    }
    expect(receiver.received[0]!.token).not.toBe(receiver.received[1]!.token)
    expect(decodeJwt(receiver.received[0]!.token).jti).not.toBe(decodeJwt(receiver.received[1]!.token).jti)
    expect(await rows(sid)).toEqual([
      { client_id: 'spa', status: 'delivered', attempts: 1, last_error: null, http_status: 200, reason: 'logout' },
      { client_id: 'web', status: 'delivered', attempts: 1, last_error: null, http_status: 200, reason: 'logout' },
    ])
    expect(audits('logout.delivered').filter((a) => a.sid === sid)).toEqual([
      expect.objectContaining({
        level: 30,
        outcome: 'success',
        client_id: expect.any(String),
        subject: 'u-alice',
        attempts: 1,
        session_end: 'logout',
        http_status: 200,
      }),
      expect.objectContaining({
        level: 30,
        outcome: 'success',
        client_id: expect.any(String),
        subject: 'u-alice',
        attempts: 1,
        session_end: 'logout',
        http_status: 200,
      }),
    ])
    for (const r of receiver.received) expect(authz.logs.join('\n')).not.toContain(r.token.split('.')[2])
  })

  it('a new sign-in in the same browser ends the previous session: its clients are told', async () => {
    const { cookie, sid } = await signedIn()
    const again = await signInAt(authz, '/account/sign-in?return_to=%2Faccount', 'alice', 'alice-pw', cookie)
    expect(again.next).toBe('/account')
    await worker().runOnce()
    expect(receiver.received.map((r) => r.path)).toEqual(['/logout/web'])
    expect(decodeJwt(receiver.received[0]!.token)).toMatchObject({ sid, sub: 'u-alice', aud: 'web' })
    expect(await rows(sid)).toEqual([
      { client_id: 'web', status: 'delivered', attempts: 1, last_error: null, http_status: 200, reason: 'replaced' },
    ])
  })

  it('the sign-out page is answered before delivery completes (the outbox row is queued with the session end)', async () => {
    receiver.answer('/logout/web', 'hold')
    const { cookie, idToken, sid } = await signedIn()
    const res = await logout(cookie, idToken)
    expect(res.statusCode).toBe(200)
    const run = worker().runOnce()
    await receiver.arrivals(1)
    expect(await rows(sid)).toEqual([
      { client_id: 'web', status: 'pending', attempts: 1, last_error: null, http_status: null, reason: 'logout' },
    ])
    receiver.release(204) // §2.8: some frameworks answer 204; it counts as success
    await run
    expect(await rows(sid)).toEqual([
      { client_id: 'web', status: 'delivered', attempts: 1, last_error: null, http_status: 204, reason: 'logout' },
    ])
  })

  it('a 500 and a timeout are retried after the back-off (on the clock), up to the bound; then the failure is recorded and logged', async () => {
    receiver.answer('/logout/web', 500, 'hold', 503)
    const { cookie, idToken, sid } = await signedIn()
    await logout(cookie, idToken)
    await worker().runOnce()
    expect(await rows(sid)).toEqual([
      { client_id: 'web', status: 'pending', attempts: 1, last_error: 'http_status', http_status: 500, reason: 'logout' },
    ])
    await worker().runOnce() // not due yet
    authz.clock.advance(4)
    await worker().runOnce()
    expect(receiver.received).toHaveLength(1)

    authz.clock.advance(1) // the first back-off: 5 s
    await worker().runOnce() // held: the attempt times out
    expect(receiver.received).toHaveLength(2)
    expect(await rows(sid)).toEqual([
      { client_id: 'web', status: 'pending', attempts: 2, last_error: 'timeout', http_status: null, reason: 'logout' },
    ])
    receiver.release()

    authz.clock.advance(30) // the second back-off
    await worker().runOnce()
    expect(receiver.received).toHaveLength(3)
    expect(await rows(sid)).toEqual([
      { client_id: 'web', status: 'failed', attempts: 3, last_error: 'http_status', http_status: 503, reason: 'logout' },
    ])
    authz.clock.advance(3600)
    await worker().runOnce()
    expect(receiver.received).toHaveLength(3) // bounded: nothing after the last attempt

    const retries = authz.logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'back-channel logout attempt failed; will retry' && l.sid === sid)
    expect(retries).toEqual([
      expect.objectContaining({ level: 40, client_id: 'web', attempt: 1, error: 'http_status', http_status: 500, retry_in_seconds: 5 }),
      expect.objectContaining({ level: 40, client_id: 'web', attempt: 2, error: 'timeout', retry_in_seconds: 30 }),
    ])
    expect(audits('logout.failed').filter((a) => a.sid === sid)).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'back-channel logout failed; giving up',
        outcome: 'failure',
        client_id: 'web',
        subject: 'u-alice',
        reason: 'http_status',
        http_status: 503,
        attempts: 3,
        session_end: 'logout',
      }),
    ])
    for (const r of receiver.received) expect(authz.logs.join('\n')).not.toContain(r.token.split('.')[2])
  })

  it('a 400 (the client rejected the token) is final at once: retrying cannot change it', async () => {
    receiver.answer('/logout/web', 400)
    const { cookie, idToken, sid } = await signedIn()
    await logout(cookie, idToken)
    await worker().runOnce()
    authz.clock.advance(3600)
    await worker().runOnce()
    expect(receiver.received).toHaveLength(1)
    expect(await rows(sid)).toEqual([
      { client_id: 'web', status: 'failed', attempts: 1, last_error: 'http_status', http_status: 400, reason: 'logout' },
    ])
  })

  it('an administrator signs a user out everywhere (authz users sign-out, disable): the clients of every session are told', async () => {
    for (const who of ['alice', 'bob']) await cli(['sign-out', who]) // sessions earlier tests left
    await worker().runOnce()
    receiver.reset()
    const first = await signedIn()
    const second = await signedIn()
    const bob = await session(authz, 'bob', 'bob-pw')
    await codeFor(authz, bob)
    expect(await cli(['sign-out', 'alice'])).toEqual(['ended 2 sessions of user "alice"'])
    await worker().runOnce()
    expect(receiver.received.map((r) => decodeJwt(r.token).sid).sort()).toEqual([first.sid, second.sid].sort())
    expect(await rows(first.sid)).toEqual([
      { client_id: 'web', status: 'delivered', attempts: 1, last_error: null, http_status: 200, reason: 'admin' },
    ])
    expect((await authz.app.inject({ method: 'GET', url: '/account', headers: { cookie: first.cookie } })).statusCode).toBe(303) // signed out
    expect((await authz.app.inject({ method: 'GET', url: '/account', headers: { cookie: bob } })).statusCode).toBe(200) // bob untouched
    expect(await cli(['sign-out', 'alice'])).toEqual(['user "alice" had no sessions'])
    await expect(cli(['sign-out', 'nobody'])).rejects.toThrow(new CliError('no user "nobody"'))

    receiver.reset()
    expect(await cli(['disable', 'bob'])).toEqual(['disabled user "bob"'])
    await worker().runOnce()
    expect(receiver.received.map((r) => decodeJwt(r.token))).toEqual([expect.objectContaining({ sub: 'u-bob', aud: 'web' })])
    expect(await cli(['enable', 'bob'])).toEqual(['enabled user "bob"'])
  })

  describe("replicas (the app's own worker stopped, so that only those under test send)", () => {
    beforeAll(() => worker().stop())
    const replica = (options: Partial<BackchannelLogoutOptions> = {}) =>
      createBackchannelLogoutWorker({
        issuer: TEST_ISSUER,
        clock: authz.clock,
        store: createPgBackchannelLogoutStore(authz.db),
        clients: createPgClientStore(authz.db),
        keys: authz.app.authz.keys,
        logger: authz.app.log,
        audit: authz.app.authz.audit,
        options,
      })
    /** Queues `n` logouts for a client directly (as ended sessions would), `secondsAgo` before now. */
    let queued = 0
    const queue = async (clientId: string, n: number, secondsAgo = 0) => {
      const at = new Date(authz.clock.now() - secondsAgo * 1000)
      const { rows: ids } = await authz.db.query<{ sid: string }>(
        `INSERT INTO backchannel_logouts (client_id, subject_id, sid, reason, created_at, next_attempt_at)
         SELECT $1, 'u-alice', 'queued-' || $1 || '-' || g || '-' || $4, 'replaced', $2::timestamptz, $2::timestamptz FROM generate_series(1, $3) g
         RETURNING sid`,
        [clientId, at.toISOString(), n, String(++queued)],
      )
      return ids.map((r) => r.sid)
    }
    const statuses = async (sids: string[]) =>
      (
        await authz.db.query<{ status: string; last_error: string | null }>(
          'SELECT status, last_error FROM backchannel_logouts WHERE sid = ANY ($1)',
          [sids],
        )
      ).rows

    it("one app's unanswering receiver does not hold up another app's logouts, however many of its own are queued", async () => {
      // An attacker who can sign in can queue many logouts for an app whose receiver hangs
      // (each sign-in replacing the last session); the other apps' logouts must still go out.
      const slow = await queue('spa', 30, 10) // queued first: due before web's
      const fast = await queue('web', 1)
      receiver.answer('/logout/spa', ...slow.map(() => 'hold' as const))
      const w = replica({ timeoutMs: 20_000 }) // the held attempts are released by the test, never timed out
      const run = w.runOnce()
      await receiver.until((all) => all.some((r) => r.path === '/logout/web'))
      // When web's arrives, no attempt of spa's has had to time out first.
      expect((await statuses(slow)).filter((r) => r.last_error !== null)).toEqual([])
      receiver.answer('/logout/spa') // the rest are answered at once
      receiver.release()
      await run
      expect(await statuses([...slow, ...fast])).toEqual([...slow, ...fast].map(() => ({ status: 'delivered', last_error: null })))
      expect(receiver.received.filter((r) => r.path === '/logout/spa').length).toBeLessThanOrEqual(30) // each sent once
    })

    it('the client as registered when sending decides: a disabled one gets no token signed for it, a moved URI is used, a removed URI ends the row', async () => {
      // A disabled client is refused everything (it may be shut off for being compromised): no
      // token naming a user's session is signed for it. The row ends, recorded and audited.
      const [disabled] = await queue('spa', 1)
      const [moved] = await queue('web', 1)
      await authz.db.query(`UPDATE clients SET enabled = false WHERE client_id = 'spa'`)
      const webUri = (await authz.db.query<{ u: string }>(`SELECT back_channel_logout_uri AS u FROM clients WHERE client_id = 'web'`))
        .rows[0]!.u
      await authz.db.query(`UPDATE clients SET back_channel_logout_uri = $1 WHERE client_id = 'web'`, [
        webUri.replace('/logout/web', '/logout/web-moved'),
      ])
      try {
        await replica().runOnce()
        expect(receiver.received.map((r) => r.path)).toEqual(['/logout/web-moved'])
        expect(await rows(disabled!)).toEqual([
          { client_id: 'spa', status: 'failed', attempts: 1, last_error: 'client_disabled', http_status: null, reason: 'replaced' },
        ])
        expect(await rows(moved!)).toEqual([
          { client_id: 'web', status: 'delivered', attempts: 1, last_error: null, http_status: 200, reason: 'replaced' },
        ])
        expect(audits('logout.failed').filter((a) => a.sid === disabled)).toEqual([
          expect.objectContaining({ client_id: 'spa', reason: 'client_disabled', attempts: 1, session_end: 'replaced' }),
        ])

        const [unregistered] = await queue('web', 1)
        await authz.db.query(`UPDATE clients SET back_channel_logout_uri = NULL WHERE client_id = 'web'`)
        await replica().runOnce()
        expect(receiver.received).toHaveLength(1)
        expect(await rows(unregistered!)).toEqual([
          { client_id: 'web', status: 'failed', attempts: 1, last_error: 'client_gone', http_status: null, reason: 'replaced' },
        ])
      } finally {
        await authz.db.query(`UPDATE clients SET enabled = true WHERE client_id = 'spa'`)
        await authz.db.query(`UPDATE clients SET back_channel_logout_uri = $1 WHERE client_id = 'web'`, [webUri])
      }
    })

    it('a large backlog is sent with bounded concurrency (at most perClient to one client at a time), each row once', async () => {
      const sids = await queue('web', 40)
      receiver.answer('/logout/web', ...sids.map(() => 'hold' as const))
      const run = replica({ timeoutMs: 5000 }).runOnce()
      await receiver.arrivals(5)
      // Claimed (leased) rows: those in flight; the rest wait for a slot of this client.
      expect(
        (
          await authz.db.query<{ n: number }>('SELECT count(*)::int AS n FROM backchannel_logouts WHERE sid = ANY ($1) AND attempts > 0', [
            sids,
          ])
        ).rows[0]!.n,
      ).toBe(5)
      expect(receiver.received).toHaveLength(5)
      receiver.answer('/logout/web')
      receiver.release()
      await run
      expect(receiver.received.map((r) => decodeJwt(r.token).sid).sort()).toEqual([...sids].sort())
      expect(new Set((await statuses(sids)).map((r) => r.status))).toEqual(new Set(['delivered']))
    })

    it('the database going away after the POST: the outcome is lost, the lease runs out, the row is sent again (at least once), never lost', async () => {
      const store = createPgBackchannelLogoutStore(authz.db)
      const down = new UnavailableError('database unavailable')
      const flaky = createBackchannelLogoutWorker({
        issuer: TEST_ISSUER,
        clock: authz.clock,
        store: { ...store, finish: () => Promise.reject(down), retry: () => Promise.reject(down) },
        clients: createPgClientStore(authz.db),
        keys: authz.app.authz.keys,
        logger: authz.app.log,
        audit: authz.app.authz.audit,
      })
      const [sid] = await queue('web', 1)
      await flaky.runOnce()
      expect(receiver.received).toHaveLength(1)
      expect(await rows(sid!)).toEqual([
        { client_id: 'web', status: 'pending', attempts: 1, last_error: null, http_status: null, reason: 'replaced' },
      ])
      await replica().runOnce()
      expect(receiver.received).toHaveLength(1) // leased: not sent again while the lease holds
      authz.clock.advance(60)
      await replica().runOnce()
      expect(receiver.received.map((r) => decodeJwt(r.token).sid)).toEqual([sid, sid])
      expect(await rows(sid!)).toEqual([
        { client_id: 'web', status: 'delivered', attempts: 2, last_error: null, http_status: 200, reason: 'replaced' },
      ])
    })

    it('a database restart while outcomes are saved: they are saved once it answers, nothing is sent twice, the client is not held up', async () => {
      // The outage: PostgreSQL restarting for a moment just as the receiver answers 200. The
      // outcomes could not be saved, so their rows kept the 60 s lease, counted against the
      // client's bound of 5 in flight: every logout of the client stalled for a minute, and then
      // those rows were sent again although the receiver had accepted them.
      const faulty = createFreezableDb(authz.db)
      const w = createBackchannelLogoutWorker({
        issuer: TEST_ISSUER,
        clock: authz.clock,
        store: createPgBackchannelLogoutStore(faulty.db),
        clients: createPgClientStore(faulty.db),
        keys: authz.app.authz.keys,
        logger: authz.app.log,
        audit: authz.app.authz.audit,
      })
      const inFlight = await queue('web', 5, 10)
      const later = await queue('web', 5)
      receiver.answer('/logout/web', ...inFlight.map(() => 'hold' as const))
      const run = w.runOnce()
      await receiver.arrivals(5)
      faulty.fail()
      receiver.release(200)
      await run.catch(() => {}) // the run ends with the database away, however it reports it
      expect(faulty.refused).toBeGreaterThan(0)
      faulty.recover()
      authz.clock.advance(1) // the database answers again a moment later

      await w.runOnce()
      expect(receiver.received.map((r) => decodeJwt(r.token).sid).sort()).toEqual([...inFlight, ...later].sort())
      expect(await statuses([...inFlight, ...later])).toEqual(
        [...inFlight, ...later].map(() => ({ status: 'delivered', last_error: null })),
      )
      authz.clock.advance(120) // past any lease: nothing is sent again
      await w.runOnce()
      await replica().runOnce()
      expect(receiver.received).toHaveLength(10)
      const { rows: attempts } = await authz.db.query<{ attempts: number }>(
        'SELECT attempts FROM backchannel_logouts WHERE sid = ANY ($1)',
        [[...inFlight, ...later]],
      )
      expect(attempts.map((r) => r.attempts)).toEqual(attempts.map(() => 1))
    })

    it('a replica killed mid-delivery holds its client up only for the attempt timeout, not the lease; its logouts are sent again, none lost', async () => {
      // A replica dies with 5 attempts to one client in flight: its rows stay leased for 60 s.
      // Counting those leases against the client's bound of 5 stalled the client's every other
      // logout for the lease's length, although no attempt can outlive its 5 s timeout.
      let posted = 0
      let allPosted!: () => void
      const claimed = new Promise<void>((resolve) => (allPosted = resolve))
      const killed = replica({ fetch: () => (++posted === 5 && allPosted(), new Promise<Response>(() => {})) }) // never answers: the process is gone
      const inFlight = await queue('web', 5, 10)
      const later = await queue('web', 5)
      void killed.runOnce()
      await claimed

      const w = replica() // timeoutMs 5000
      await w.runOnce()
      expect(receiver.received).toEqual([]) // within the attempt timeout the bound still holds: 5 in flight
      authz.clock.advance(11) // past the attempt timeout and its margin
      await w.runOnce()
      expect(receiver.received.map((r) => decodeJwt(r.token).sid).sort()).toEqual([...later].sort())
      expect(await statuses(inFlight)).toEqual(inFlight.map(() => ({ status: 'pending', last_error: null }))) // still leased
      authz.clock.advance(50) // the dead replica's leases run out: at least once, never lost
      await w.runOnce()
      expect(receiver.received.map((r) => decodeJwt(r.token).sid).sort()).toEqual([...inFlight, ...later].sort())
      expect(await statuses([...inFlight, ...later])).toEqual(
        [...inFlight, ...later].map(() => ({ status: 'delivered', last_error: null })),
      )
    })

    it('an attempt that hangs does not hold up the others claimed with it', async () => {
      const slow = await queue('spa', 1, 10)
      const fast = await queue('web', 25) // more than one claim's worth
      receiver.answer('/logout/spa', 'hold')
      const run = replica({ timeoutMs: 20_000 }).runOnce() // the held attempt is released by the test, never timed out
      await receiver.until((all) => all.filter((r) => r.path === '/logout/web').length === fast.length)
      expect(await statuses(slow)).toEqual([{ status: 'pending', last_error: null }]) // still in flight, not timed out
      receiver.release()
      await run
      expect(await statuses([...slow, ...fast])).toEqual([...slow, ...fast].map(() => ({ status: 'delivered', last_error: null })))
    })

    it('two workers (replicas) never send the same logout twice', async () => {
      const [a, b] = [replica(), replica()]
      const sids: string[] = []
      for (let i = 0; i < 3; i++) {
        const { cookie, idToken, sid } = await signedIn()
        await logout(cookie, idToken)
        sids.push(sid)
      }
      receiver.answer('/logout/web', 'hold', 'hold', 'hold')
      // Both claim while the first one's attempts are in flight (held): the leased rows are not claimed again.
      const runs = [a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce()]
      await receiver.arrivals(3)
      receiver.release()
      await Promise.all(runs)
      await Promise.all([a.runOnce(), b.runOnce()])
      expect(receiver.received.map((r) => decodeJwt(r.token).sid).sort()).toEqual([...sids].sort())
      for (const sid of sids)
        expect(await rows(sid)).toEqual([
          { client_id: 'web', status: 'delivered', attempts: 1, last_error: null, http_status: 200, reason: 'logout' },
        ])
    })

    it('an attempt that cannot even be made (the client cannot be read) counts as a failed one and is retried', async () => {
      const broken = createBackchannelLogoutWorker({
        issuer: TEST_ISSUER,
        clock: authz.clock,
        store: createPgBackchannelLogoutStore(authz.db),
        clients: { findById: () => Promise.reject(new Error('boom')) },
        keys: authz.app.authz.keys,
        logger: authz.app.log,
        audit: authz.app.authz.audit,
      })
      const { cookie, idToken, sid } = await signedIn()
      await logout(cookie, idToken)
      await broken.runOnce()
      expect(await rows(sid)).toEqual([
        { client_id: 'web', status: 'pending', attempts: 1, last_error: 'internal_error', http_status: null, reason: 'logout' },
      ])
      expect(authz.logs.some((l) => l.includes('back-channel logout attempt crashed') && l.includes('boom'))).toBe(true)
      authz.clock.advance(5)
      await replica().runOnce()
      expect(await rows(sid)).toEqual([
        { client_id: 'web', status: 'delivered', attempts: 2, last_error: null, http_status: 200, reason: 'logout' },
      ])
    })

    it('stopping (SIGTERM) cuts an attempt in flight short and hands the row back, not counted, for another replica', async () => {
      const one = replica()
      receiver.answer('/logout/web', 'hold')
      const { cookie, idToken, sid } = await signedIn()
      await logout(cookie, idToken)
      const run = one.runOnce()
      await receiver.arrivals(1)
      await one.stop()
      await run
      expect(await rows(sid)).toEqual([
        { client_id: 'web', status: 'pending', attempts: 0, last_error: null, http_status: null, reason: 'logout' },
      ])
      const {
        rows: [lease],
      } = await authz.db.query<{ leased_until: Date | null }>('SELECT leased_until FROM backchannel_logouts WHERE sid = $1', [sid])
      expect(lease!.leased_until).toBeNull()
      receiver.release()
    })
  })
})

describe('seed: backChannelLogoutUri and backChannelLogoutSessionRequired', () => {
  const one = (c: Record<string, unknown>) => validateSeed({ clients: [{ clientId: 'web-app', ...c }] }).clients[0]!

  it('accepts https anywhere and http on this machine; sid is required by default, as in Duende', () => {
    for (const uri of [
      'https://app.example/backchannel-logout?tenant=a',
      'http://localhost:3000/bcl',
      'http://127.0.0.1:8080/bcl',
      'http://[::1]/bcl',
      'http://app.localhost/bcl',
    ]) {
      expect(one({ backChannelLogoutUri: uri }), uri).toMatchObject({ backChannelLogoutUri: uri, backChannelLogoutSessionRequired: true })
    }
    expect(one({}).backChannelLogoutUri).toBeUndefined()
    expect(one({}).backChannelLogoutSessionRequired).toBe(true)
    expect(one({ backChannelLogoutSessionRequired: false }).backChannelLogoutSessionRequired).toBe(false)
  })

  it('names the client and what is wrong with anything else', () => {
    const cases: Array<[string, string]> = [
      ['/bcl', 'is not an absolute URL'],
      ['app.example/bcl', 'is not an absolute URL'],
      ['http://app.example/bcl', 'must use https (http only for localhost)'],
      ['ftp://app.example/bcl', 'must use https (http only for localhost)'],
      ['https://app.example/bcl#frag', 'must not contain a fragment (#)'],
      ['https://user:pw@app.example/bcl', 'must not contain credentials'],
    ]
    for (const [uri, problem] of cases) {
      expect(() => one({ backChannelLogoutUri: uri }), uri).toThrow(
        `clients[0].backChannelLogoutUri: client web-app: backChannelLogoutUri ${JSON.stringify(uri)} ${problem}`,
      )
    }
    expect(() => one({ backChannelLogoutSessionRequired: 'yes' })).toThrow('clients[0].backChannelLogoutSessionRequired')
  })
})

describe('metrics', () => {
  it('count finished back-channel logouts by outcome (from the audit events)', async () => {
    const m = createMetrics({ processMetrics: false })
    const text = async () => m.registry.metrics()
    expect(await text()).toContain('authz_backchannel_logouts_total{outcome="failed"} 0')
    m.audit({ event: 'logout.delivered', clientId: 'web', attempts: 1 })
    m.audit({ event: 'logout.delivered', clientId: 'spa', attempts: 2 })
    m.audit({ event: 'logout.failed', clientId: 'web', attempts: 5, reason: 'timeout' })
    expect(await text()).toContain('authz_backchannel_logouts_total{outcome="delivered"} 2')
    expect(await text()).toContain('authz_backchannel_logouts_total{outcome="failed"} 1')
  })
})
