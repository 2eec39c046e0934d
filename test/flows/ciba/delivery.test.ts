// CIBA ping and push delivery (OpenID CIBA Core 1.0 §10.2, §10.3, §12): the client's notification
// endpoint is an in-process HTTP listener; deliveries go out from the outbox the decision wrote,
// sent by the app's worker (runOnce), with retries counted on the injected clock.
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createLocalJWKSet, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../src/app.js'
import type { Db } from '../../../src/db/db.js'
import { SeedError } from '../../../src/seed/errors.js'
import { createPgCibaDeliveryStore } from '../../../src/stores/ciba-deliveries.postgres.js'
import { createPgCibaRequestStore } from '../../../src/stores/ciba-requests.postgres.js'
import { createPgClientStore } from '../../../src/stores/clients.postgres.js'
import { applySeed } from '../../../src/seed/apply.js'
import { atHash } from '../../../src/tokens/issuer.js'
import {
  CIBA_DELIVERY_WORKER,
  createCibaDeliveryWorker,
  type CibaDeliveryOptions,
  type CibaDeliveryWorker,
} from '../../../src/flows/ciba/delivery.js'
import { createSealer } from '../../../src/flows/ciba/sealed.js'
import { createFreezableDb } from '../../helpers/faulty-db.js'
import { captureLogs } from '../../helpers/app.js'
import { decide, lastRequestId } from './approve-helper.js'
import { CIBA, createCibaTestApp, NO_STORE, poll, startCiba, TEST_ISSUER, type CibaTestApp } from './harness.js'

interface Received {
  method: string
  path: string
  authorization: string | undefined
  contentType: string | undefined
  body: string
}

/** The clients' notification endpoints: records every request; /fail answers 500, the rest 204. */
function createListener() {
  const received: Received[] = []
  const server: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        path: req.url ?? '',
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        body,
      })
      res.writeHead(req.url === '/fail' ? 500 : 204).end()
    })
  })
  return {
    received,
    async listen() {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}

const listener = createListener()
let authz: CibaTestApp
let worker: CibaDeliveryWorker
const PINGER = { client_id: 'pinger', client_secret: 'pinger-secret' }
const PUSHER = { client_id: 'pusher', client_secret: 'pusher-secret' }
const FLAKY = { client_id: 'flaky', client_secret: 'flaky-secret' }

beforeAll(async () => {
  const base = await listener.listen()
  authz = await createCibaTestApp({ env: { KEY_ENCRYPTION_SECRET: 'a key encryption secret for tests' } })
  worker = authz.app.authz.workers.get(CIBA_DELIVERY_WORKER) as CibaDeliveryWorker
  const client = (clientId: string, mode: 'ping' | 'push', path: string) => ({
    clientId,
    secrets: [{ value: `${clientId}-secret` }],
    allowedGrantTypes: [CIBA],
    allowedScopes: ['openid', 'profile', 'orders.read', 'offline_access'],
    allowOfflineAccess: true,
    backchannelTokenDeliveryMode: mode,
    backchannelClientNotificationEndpoint: `${base}${path}`,
  })
  await applySeed(authz.db, {
    clients: [client('pinger', 'ping', '/ping'), client('pusher', 'push', '/push'), client('flaky', 'push', '/fail')],
  })
})
afterAll(async () => {
  await authz.close()
  await listener.close()
})

async function start(client: Record<string, string>, token: string, scope = 'openid profile offline_access') {
  const res = await startCiba(authz, { ...client, scope, login_hint: 'alice', client_notification_token: token })
  expect(res.statusCode).toBe(200)
  return { authReqId: res.json().auth_req_id as string, requestId: await lastRequestId(authz) }
}

const audits = (event: string) => authz.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === event)

async function outbox(requestId: string) {
  const { rows } = await authz.db.query(
    'SELECT mode, status, attempts, secret IS NULL AS secret_erased, payload IS NULL AS payload_erased, last_error, http_status FROM ciba_deliveries WHERE request_id = $1',
    [requestId],
  )
  return rows
}

describe('CIBA ping and push delivery', () => {
  it('discovery lists the three delivery modes', async () => {
    const res = await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })
    expect(res.json().backchannel_token_delivery_modes_supported).toEqual(['poll', 'ping', 'push'])
  })

  it('refuses a ping or push request without a usable client_notification_token', async () => {
    for (const [params, description] of [
      [{}, 'client_notification_token is required for ping and push clients'],
      [{ client_notification_token: 'not a bearer token' }, 'client_notification_token must be a bearer token (RFC 6750 section 2.1)'],
      [{ client_notification_token: 'x'.repeat(1025) }, 'client_notification_token is too long'],
    ] as const) {
      for (const client of [PINGER, PUSHER]) {
        const res = await startCiba(authz, { ...client, scope: 'openid', login_hint: 'alice', ...params })
        expect(res.headers).toMatchObject(NO_STORE)
        expect({ status: res.statusCode, body: res.json() }).toEqual({
          status: 400,
          body: { error: 'invalid_request', error_description: description },
        })
      }
    }
  })

  it('ping: POSTs {auth_req_id} with the Bearer token once the person approves; the client then redeems as in poll', async () => {
    const { authReqId, requestId } = await start(PINGER, 'ping-token.1~')
    // At rest the token and the auth_req_id are sealed with KEY_ENCRYPTION_SECRET.
    const stored = (
      await authz.db.query<{ delivery_secret: string }>('SELECT delivery_secret FROM ciba_requests WHERE id = $1', [requestId])
    ).rows[0]!.delivery_secret
    expect(stored).toMatch(/^v1\./)
    expect(stored).not.toContain('ping-token')
    expect(stored).not.toContain(authReqId)
    expect((await poll(authz, authReqId, PINGER)).json()).toEqual({ error: 'authorization_pending' })

    const before = listener.received.length
    expect((await decide(authz, requestId, 'approve')).statusCode).toBe(200)
    await worker.runOnce()
    expect(listener.received.slice(before)).toEqual([
      {
        method: 'POST',
        path: '/ping',
        authorization: 'Bearer ping-token.1~',
        contentType: 'application/json',
        body: JSON.stringify({ auth_req_id: authReqId }),
      },
    ])
    expect(await outbox(requestId)).toEqual([
      { mode: 'ping', status: 'delivered', attempts: 1, secret_erased: true, payload_erased: true, last_error: null, http_status: 204 },
    ])
    expect(audits('ciba.delivered').at(-1)).toMatchObject({
      client_id: 'pinger',
      ciba_request_id: requestId,
      delivery_mode: 'ping',
      http_status: 204,
    })

    authz.clock.advance(5)
    const tokens = await poll(authz, authReqId, PINGER)
    expect(tokens.statusCode).toBe(200)
    expect(Object.keys(tokens.json()).sort()).toEqual(['access_token', 'expires_in', 'id_token', 'refresh_token', 'scope', 'token_type'])
    expect(authz.logs.join('\n')).not.toContain('ping-token')
  })

  it('push: POSTs the tokens, the ID token with auth_req_id, at_hash and rt_hash; the token endpoint refuses the push client', async () => {
    const { authReqId, requestId } = await start(PUSHER, 'push-token')
    const refused = await poll(authz, authReqId, PUSHER)
    expect(refused.headers).toMatchObject(NO_STORE)
    expect({ status: refused.statusCode, body: refused.json() }).toEqual({
      status: 400,
      body: { error: 'unauthorized_client', error_description: 'a push-mode client receives its tokens at its notification endpoint' },
    })

    const before = listener.received.length
    expect((await decide(authz, requestId, 'approve')).statusCode).toBe(200)
    await worker.runOnce()
    const got = listener.received.slice(before)
    expect(got.map((r) => [r.method, r.path, r.authorization, r.contentType])).toEqual([
      ['POST', '/push', 'Bearer push-token', 'application/json'],
    ])
    const body = JSON.parse(got[0]!.body)
    expect(Object.keys(body)).toEqual(['auth_req_id', 'access_token', 'token_type', 'expires_in', 'refresh_token', 'id_token'])
    expect(body).toMatchObject({ auth_req_id: authReqId, token_type: 'Bearer', expires_in: 3600 })
    const jwks = createLocalJWKSet((await authz.app.inject({ method: 'GET', url: '/.well-known/openid-configuration/jwks' })).json())
    const { payload: id } = await jwtVerify(body.id_token, jwks, {
      issuer: TEST_ISSUER,
      audience: 'pusher',
      currentDate: new Date(authz.clock.now()),
    })
    expect(id).toMatchObject({
      sub: 'u-alice',
      'urn:openid:params:jwt:claim:auth_req_id': authReqId,
      at_hash: atHash(body.access_token),
      'urn:openid:params:jwt:claim:rt_hash': atHash(body.refresh_token),
    })
    // The tokens work; nothing of them stays in the outbox; the auth_req_id is used up.
    const userinfo = await authz.app.inject({
      method: 'GET',
      url: '/connect/userinfo',
      headers: { authorization: `Bearer ${body.access_token}` },
    })
    expect(userinfo.json()).toMatchObject({ sub: 'u-alice', name: 'Alice Example' })
    expect(await outbox(requestId)).toEqual([
      { mode: 'push', status: 'delivered', attempts: 1, secret_erased: true, payload_erased: true, last_error: null, http_status: 204 },
    ])
    expect((await authz.db.query('SELECT consumed_at IS NOT NULL AS consumed FROM ciba_requests WHERE id = $1', [requestId])).rows).toEqual(
      [{ consumed: true }],
    )
    authz.clock.advance(5)
    expect((await poll(authz, authReqId, PUSHER)).json().error).toBe('unauthorized_client')
    expect(audits('ciba.delivered').at(-1)).toMatchObject({ client_id: 'pusher', delivery_mode: 'push', delivered: 'tokens' })
    const logText = authz.logs.join('\n')
    for (const secret of ['push-token', authReqId, body.access_token, body.refresh_token]) expect(logText).not.toContain(secret)
  })

  it('push: a denial POSTs the error', async () => {
    const { authReqId, requestId } = await start(PUSHER, 'deny-token')
    const before = listener.received.length
    expect((await decide(authz, requestId, 'deny')).statusCode).toBe(200)
    await worker.runOnce()
    const got = listener.received.slice(before)
    expect(got.map((r) => [r.path, r.authorization])).toEqual([['/push', 'Bearer deny-token']])
    expect(JSON.parse(got[0]!.body)).toEqual({
      auth_req_id: authReqId,
      error: 'access_denied',
      error_description: 'the user denied the request',
    })
    expect(audits('ciba.delivered').at(-1)).toMatchObject({ client_id: 'pusher', delivery_mode: 'push', delivered: 'access_denied' })
  })

  it('retries a failing endpoint with back-off on the clock, then gives up: audited, and the pushed tokens revoked', async () => {
    const { requestId } = await start(FLAKY, 'flaky-token')
    const before = listener.received.length
    expect((await decide(authz, requestId, 'approve')).statusCode).toBe(200)
    await worker.runOnce()
    expect(listener.received.length - before).toBe(1)
    const first = listener.received.at(-1)!.body
    expect(await outbox(requestId)).toEqual([
      {
        mode: 'push',
        status: 'pending',
        attempts: 1,
        secret_erased: false,
        payload_erased: false,
        last_error: 'http_status',
        http_status: 500,
      },
    ])
    // Not due before its back-off has passed on the clock.
    authz.clock.advance(4)
    await worker.runOnce()
    expect(listener.received.length - before).toBe(1)
    for (const [wait, attempts] of [
      [1, 2],
      [30, 3],
      [120, 4],
      [600, 5],
    ] as const) {
      authz.clock.advance(wait)
      await worker.runOnce()
      expect(listener.received.length - before).toBe(attempts)
      expect(listener.received.at(-1)!.body).toBe(first) // the same tokens each time
    }
    expect(await outbox(requestId)).toEqual([
      {
        mode: 'push',
        status: 'failed',
        attempts: 5,
        secret_erased: true,
        payload_erased: true,
        last_error: 'http_status',
        http_status: 500,
      },
    ])
    expect(audits('ciba.delivery_failed').at(-1)).toMatchObject({
      level: 40,
      client_id: 'flaky',
      ciba_request_id: requestId,
      delivery_mode: 'push',
      attempts: 5,
      reason: 'http_status',
      http_status: 500,
    })
    // Tokens that never reached the client do not live on.
    const { access_token } = JSON.parse(first)
    const userinfo = await authz.app.inject({
      method: 'GET',
      url: '/connect/userinfo',
      headers: { authorization: `Bearer ${access_token}` },
    })
    expect(userinfo.statusCode).toBe(401)
    authz.clock.advance(10_000)
    await worker.runOnce()
    expect(listener.received.length - before).toBe(5)
  })

  it("docs/flows.md's push client is a valid seed file, applied as printed", async () => {
    const doc = readFileSync('docs/flows.md', 'utf8')
    const block = /### Ping and push[\s\S]*?```json\n([\s\S]*?)```/.exec(doc)![1]!
    await applySeed(authz.db, JSON.parse(block))
    expect(await createPgClientStore(authz.db).findById('bank-push')).toMatchObject({
      allowedGrantTypes: [CIBA],
      allowOfflineAccess: true,
      backchannelTokenDeliveryMode: 'push',
      backchannelClientNotificationEndpoint: 'http://localhost:3000/ciba/notify',
    })
    const res = await startCiba(authz, { client_id: 'bank-push', client_secret: 'bank-push-secret', scope: 'openid', login_hint: 'alice' })
    expect(res.json()).toEqual({
      error: 'invalid_request',
      error_description: 'client_notification_token is required for ping and push clients',
    })
  })

  it('the seed refuses ping or push without an endpoint, and an endpoint that is not https', async () => {
    const err = await applySeed(authz.db, {
      clients: [
        { clientId: 'no-endpoint', backchannelTokenDeliveryMode: 'push' },
        { clientId: 'plain-http', backchannelTokenDeliveryMode: 'ping', backchannelClientNotificationEndpoint: 'http://bank.example/cb' },
      ],
    }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SeedError)
    expect((err as SeedError).problems).toEqual([
      'clients[0].backchannelClientNotificationEndpoint: client no-endpoint: backchannelTokenDeliveryMode push needs a backchannelClientNotificationEndpoint',
      'clients[1].backchannelClientNotificationEndpoint: client plain-http: backchannelClientNotificationEndpoint "http://bank.example/cb" must use https (http only for localhost)',
    ])
  })

  it('the seed refuses push for a client that must get DPoP-bound tokens: pushed tokens are Bearer', async () => {
    const push = { backchannelTokenDeliveryMode: 'push', backchannelClientNotificationEndpoint: 'https://bank.example/cb' }
    const err = await applySeed(authz.db, {
      clients: [
        { clientId: 'push-dpop', requireDPoP: true, ...push },
        {
          clientId: 'push-fapi2',
          profile: 'fapi2',
          tokenEndpointAuthMethod: 'private_key_jwt',
          jwksUri: 'https://bank.example/jwks',
          ...push,
        },
        { clientId: 'ping-dpop', requireDPoP: true, ...push, backchannelTokenDeliveryMode: 'ping' },
      ],
    }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SeedError)
    expect((err as SeedError).problems).toEqual([
      'clients[0].backchannelTokenDeliveryMode: client push-dpop: push delivers Bearer tokens, and this client must get DPoP-bound ones (requireDPoP or profile fapi2): use poll or ping',
      'clients[1].backchannelTokenDeliveryMode: client push-fapi2: push delivers Bearer tokens, and this client must get DPoP-bound ones (requireDPoP or profile fapi2): use poll or ping',
    ])
  })

  it('30 trials: two replicas deliver one approved push at once: the client gets its tokens once, one family of tokens is issued', async () => {
    // Push consumes the approved request (single use) and issues into its family: each replica's
    // worker (woken by NOTIFY too) races the other's for the row and for the request.
    const { logger } = captureLogs(authz.config)
    const other = await buildApp({ config: authz.config, db: authz.db, clock: authz.clock, logger })
    await other.ready()
    try {
      const otherWorker = other.authz.workers.get(CIBA_DELIVERY_WORKER) as CibaDeliveryWorker
      const bad: string[] = []
      for (let i = 0; i < 30; i++) {
        authz.clock.advance(13) // under CIBA_RATE_LIMIT_PER_USER (5 a minute)
        const { authReqId, requestId } = await start(PUSHER, `race-${i}`)
        const before = listener.received.length
        expect((await decide(authz, requestId, 'approve')).statusCode).toBe(200)
        await Promise.all([worker.runOnce(), otherWorker.runOnce(), worker.runOnce(), otherWorker.runOnce()])
        const pushed = listener.received.slice(before).filter((r) => r.authorization === `Bearer race-${i}`)
        const row = await outbox(requestId)
        const { rows } = await authz.db.query<{ kind: string; n: number }>(
          `SELECT kind, count(*)::int AS n FROM persisted_grants
            WHERE family_id = (SELECT family_id FROM ciba_deliveries WHERE request_id = $1) GROUP BY kind ORDER BY kind`,
          [requestId],
        )
        const tokens = pushed.length === 1 ? (JSON.parse(pushed[0]!.body) as { auth_req_id: string; access_token?: string }) : undefined
        if (
          pushed.length !== 1 ||
          tokens?.auth_req_id !== authReqId ||
          tokens.access_token === undefined ||
          row[0]?.status !== 'delivered' ||
          row[0]?.attempts !== 1 ||
          rows.find((r) => r.kind === 'refresh_token')?.n !== 1
        )
          bad.push(`trial ${i}: ${pushed.length} pushes, row ${JSON.stringify(row)}, grants ${JSON.stringify(rows)}`)
      }
      expect(bad).toEqual([])
    } finally {
      await other.close()
    }
  })

  describe("replicas (the app's own worker stopped, so that only those under test send)", () => {
    /** The Bearer token of a POST: which request it notifies. */
    const bearer = (init: RequestInit | undefined) => (new Headers(init?.headers).get('authorization') ?? '').replace(/^Bearer /, '')

    beforeAll(async () => {
      await worker.stop()
      // The replicas' fetch answers for these endpoints; nothing listens there.
      const client = (clientId: string) => ({
        clientId,
        secrets: [{ value: `${clientId}-secret` }],
        allowedGrantTypes: [CIBA],
        allowedScopes: ['openid'],
        backchannelTokenDeliveryMode: 'ping',
        backchannelClientNotificationEndpoint: `http://127.0.0.1:9/${clientId}`,
      })
      await applySeed(authz.db, { clients: ['hanging', 'prompt-b', 'prompt-c', 'outage', 'backlogged', 'prompt-d', 'died-on'].map(client) })
    })

    /** A delivery worker of another replica, over `db`; pings only (they issue no tokens, so revoke none). */
    const replica = (db: Db, options: Partial<CibaDeliveryOptions>) =>
      createCibaDeliveryWorker({
        clock: authz.clock,
        store: createPgCibaDeliveryStore(db),
        requests: createPgCibaRequestStore(db),
        clients: createPgClientStore(db),
        issue: () => Promise.reject(new Error('a ping issues no tokens')),
        oneTimeUse: { revokeFamily: () => Promise.reject(new Error('a ping revokes no tokens')) },
        sealer: createSealer(authz.config.keyEncryptionSecret),
        logger: authz.app.log,
        audit: authz.app.authz.audit,
        options,
      })

    /** A ping request by `clientId` approved now: its delivery is queued, due now. */
    async function approvedPing(clientId: string, token: string) {
      const started = await start({ client_id: clientId, client_secret: `${clientId}-secret` }, token, 'openid')
      expect((await decide(authz, started.requestId, 'approve')).statusCode).toBe(200)
      authz.clock.advance(1) // queued one after the other: claimed in that order
      return started
    }

    it("one client's hanging endpoint does not hold up another client's ping queued behind it", async () => {
      // Two attempts at a time: the hanging one and b's are claimed first, c's waits for a slot.
      const events: string[] = [] // the POSTs by Bearer token, and the end of the hanging one
      let answerHanging: (() => void) | undefined
      let cArrivedOrHangingEnded!: () => void
      const seen = new Promise<void>((resolve) => (cArrivedOrHangingEnded = resolve))
      const fetch = (_uri: string | URL | Request, init?: RequestInit): Promise<Response> => {
        const token = bearer(init)
        events.push(token)
        if (token === 'c-token') cArrivedOrHangingEnded()
        if (token !== 'hanging-token') return Promise.resolve(new Response(null, { status: 204 }))
        // Hangs until the test answers it, or until its attempt times out.
        return new Promise<Response>((resolve, reject) => {
          answerHanging = () => resolve(new Response(null, { status: 204 }))
          init?.signal?.addEventListener('abort', () => {
            events.push('hanging-token ended')
            cArrivedOrHangingEnded()
            reject(init.signal!.reason as Error) // a TimeoutError, as fetch rejects with
          })
        })
      }
      const hanging = await approvedPing('hanging', 'hanging-token')
      const b = await approvedPing('prompt-b', 'b-token')
      const c = await approvedPing('prompt-c', 'c-token')
      // The hanging attempt is answered by the test, never timed out, unless c's waits for its end.
      const run = replica(authz.db, { fetch, batchSize: 2, timeoutMs: 20_000 }).runOnce()
      try {
        await seen
        // c's ping went out while the hanging attempt was still in flight, not after its timeout.
        // (The first two attempts start together; which of them reaches fetch first is not fixed.)
        expect([...events].sort()).toEqual(['b-token', 'c-token', 'hanging-token'])
      } finally {
        answerHanging?.() // also when the expectation failed: no attempt left to time out into the next test
        await run // nothing of this run is left for the next test
      }
      for (const { requestId } of [hanging, b, c])
        expect(await outbox(requestId)).toEqual([
          { mode: 'ping', status: 'delivered', attempts: 1, secret_erased: true, payload_erased: true, last_error: null, http_status: 204 },
        ])
      expect([...events].sort()).toEqual(['b-token', 'c-token', 'hanging-token'])
    })

    it("one client's backlog whose endpoint hangs takes at most perClient slots: another client's ping goes out meanwhile", async () => {
      // A client with a slow receiver and several deliveries due at once (an attacker's own client
      // with many approved requests) took every slot: the other clients' pings waited behind it
      // until its attempts timed out.
      const backlog = ['backlog-1', 'backlog-2', 'backlog-3', 'backlog-4']
      const events: string[] = [] // the POSTs by Bearer token
      let holding = true
      const held: (() => void)[] = []
      let inFlight = 0
      let mostInFlight = 0
      let settle!: () => void
      const seen = new Promise<void>((resolve) => (settle = resolve))
      // Seen: d's ping and the two backlog attempts the bound allows, or a third one in flight, or
      // a held attempt's end (its timeout): whichever comes first.
      const check = () => {
        if (inFlight > 2 || (events.includes('d-token') && inFlight === 2)) settle()
      }
      const fetch = (_uri: string | URL | Request, init?: RequestInit): Promise<Response> => {
        const token = bearer(init)
        events.push(token)
        if (!backlog.includes(token) || !holding) {
          check()
          return Promise.resolve(new Response(null, { status: 204 }))
        }
        inFlight++
        mostInFlight = Math.max(mostInFlight, inFlight)
        check()
        // Hangs until the test answers it, or until its attempt times out.
        return new Promise<Response>((resolve, reject) => {
          held.push(() => (inFlight--, resolve(new Response(null, { status: 204 }))))
          init?.signal?.addEventListener('abort', () => {
            events.push(`${token} ended`)
            settle()
            reject(init.signal!.reason as Error) // a TimeoutError, as fetch rejects with
          })
        })
      }
      const queued = []
      for (const token of backlog) queued.push(await approvedPing('backlogged', token)) // due first
      const d = await approvedPing('prompt-d', 'd-token')
      // The held attempts are answered by the test, never timed out.
      const run = replica(authz.db, { fetch, batchSize: 4, perClient: 2, timeoutMs: 20_000 }).runOnce()
      try {
        await seen
        // d's ping went out while two of the backlog's attempts hung, and no third was made.
        expect([...events].sort()).toEqual(['backlog-1', 'backlog-2', 'd-token'])
        const { rows } = await authz.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ciba_deliveries WHERE client_id = 'backlogged' AND attempts > 0`,
        )
        expect(rows).toEqual([{ n: 2 }]) // claimed: the two in flight; the rest wait for a slot of this client
      } finally {
        holding = false
        for (const answer of held.splice(0)) answer()
        await run // nothing of this run is left for the next test
      }
      for (const { requestId } of [...queued, d])
        expect(await outbox(requestId)).toEqual([
          { mode: 'ping', status: 'delivered', attempts: 1, secret_erased: true, payload_erased: true, last_error: null, http_status: 204 },
        ])
      expect([...events].sort()).toEqual([...backlog, 'd-token'])
      expect(mostInFlight).toBe(2)
    })

    it('a replica killed mid-delivery holds its client up only for the attempt timeout, not the lease; its pings are sent again, none lost', async () => {
      // A replica dies with perClient attempts to one client in flight: its rows stay leased for
      // the lease's length, but no attempt can outlive its timeout, so they count only that long.
      let posted = 0
      let allPosted!: () => void
      const claimed = new Promise<void>((resolve) => (allPosted = resolve))
      const killed = replica(authz.db, {
        perClient: 2,
        fetch: () => (++posted === 2 && allPosted(), new Promise<Response>(() => {})), // never answers: the process is gone
      })
      const inFlight = [await approvedPing('died-on', 'died-1'), await approvedPing('died-on', 'died-2')]
      const later = [await approvedPing('died-on', 'died-3'), await approvedPing('died-on', 'died-4')]
      void killed.runOnce()
      await claimed

      const events: string[] = []
      const w = replica(authz.db, {
        perClient: 2, // timeoutMs 5000, leaseMs 60000
        fetch: (_uri, init) => (events.push(bearer(init)), Promise.resolve(new Response(null, { status: 204 }))),
      })
      await w.runOnce()
      expect(events).toEqual([]) // within the attempt timeout the bound still holds: 2 in flight
      authz.clock.advance(11) // past the attempt timeout and its margin
      await w.runOnce()
      expect([...events].sort()).toEqual(['died-3', 'died-4'])
      for (const { requestId } of inFlight)
        expect(await outbox(requestId)).toEqual([
          { mode: 'ping', status: 'pending', attempts: 1, secret_erased: false, payload_erased: true, last_error: null, http_status: null },
        ]) // still leased
      authz.clock.advance(50) // the dead replica's leases run out: at least once, never lost
      await w.runOnce()
      expect([...events].sort()).toEqual(['died-1', 'died-2', 'died-3', 'died-4'])
      for (const { requestId } of inFlight)
        expect(await outbox(requestId)).toEqual([
          { mode: 'ping', status: 'delivered', attempts: 2, secret_erased: true, payload_erased: true, last_error: null, http_status: 204 },
        ])
      for (const { requestId } of later)
        expect(await outbox(requestId)).toEqual([
          { mode: 'ping', status: 'delivered', attempts: 1, secret_erased: true, payload_erased: true, last_error: null, http_status: 204 },
        ])
    })

    it('the database away when the ping was answered: the outcome is saved once it is back, and the client is not pinged again', async () => {
      // The client answered 204, then PostgreSQL restarted before the outcome was written. Only
      // logged, the outcome was lost: the row stayed leased, and once the lease ran out the
      // client was pinged a second time for a request it had already been told of.
      const events: string[] = [] // the POSTs by Bearer token
      const logsBefore = authz.logs.length
      const faulty = createFreezableDb(authz.db)
      const fetch = (_uri: string | URL | Request, init?: RequestInit): Promise<Response> => {
        events.push(bearer(init))
        faulty.fail() // the database goes away while the client answers
        return Promise.resolve(new Response(null, { status: 204 }))
      }
      const { authReqId, requestId } = await approvedPing('outage', 'outage-token')
      const w = replica(faulty.db, { fetch })
      await w.runOnce().catch(() => {}) // the run ends with the database away, however it reports it
      expect(faulty.refused).toBeGreaterThan(0)
      expect(events).toEqual(['outage-token'])

      faulty.recover()
      authz.clock.advance(1) // the database answers again a moment later
      await w.runOnce()
      expect(await outbox(requestId)).toEqual([
        { mode: 'ping', status: 'delivered', attempts: 1, secret_erased: true, payload_erased: true, last_error: null, http_status: 204 },
      ])
      authz.clock.advance(120) // past the lease: nothing is sent again
      await w.runOnce()
      await replica(authz.db, {
        fetch: (_uri, init) => (events.push(bearer(init)), Promise.resolve(new Response(null, { status: 204 }))),
      }).runOnce()
      expect(events).toEqual(['outage-token'])
      expect(audits('ciba.delivered').filter((a) => a.ciba_request_id === requestId)).toEqual([
        expect.objectContaining({ client_id: 'outage', delivery_mode: 'ping', delivered: 'ping', attempts: 1, http_status: 204 }),
      ])
      // The outage is not logged as an error for each delivery.
      expect(
        authz.logs
          .slice(logsBefore)
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .filter((l) => (l.level as number) >= 50),
      ).toEqual([])
      // The client redeems as it would after any ping.
      authz.clock.advance(5)
      expect((await poll(authz, authReqId, { client_id: 'outage', client_secret: 'outage-secret' })).statusCode).toBe(200)
    })
  })
})
