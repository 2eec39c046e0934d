// A ping or push request that expires without a decision is told to its client (OpenID CIBA Core
// 1.0 §12 expired_token for push; §10.2 a ping, after which the token request answers
// expired_token, §11): through the delivery outbox (sealed, retried on the clock, audited), once
// per request, whoever looks; a request decided before its expiry is never notified again; and
// a request whose expiry notice is queued can no longer be decided, even by a replica whose clock
// lags (many trials of the decision racing the expiry: exactly one outcome each time).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CIBA_DELIVERY_WORKER, type CibaDeliveryWorker } from '../../../src/flows/ciba/delivery.js'
import { applySeed } from '../../../src/seed/apply.js'
import { createPgCibaRequestStore } from '../../../src/stores/ciba-requests.postgres.js'
import { decide, lastRequestId } from './approve-helper.js'
import { CIBA, createCibaTestApp, poll, startCiba, type CibaTestApp } from './harness.js'

interface Received {
  path: string
  authorization: string | undefined
  body: string
}

const received: Received[] = []
const server: Server = createServer((req, res) => {
  let body = ''
  req.on('data', (c: Buffer) => (body += c.toString()))
  req.on('end', () => {
    received.push({ path: req.url ?? '', authorization: req.headers.authorization, body })
    res.writeHead(req.url === '/fail' ? 503 : 204).end()
  })
})

/** The request lifetime of the seeded clients (cibaLifetime, seconds). */
const LIFETIME = 120
const PINGER = { client_id: 'pinger', client_secret: 'pinger-secret' }
const PUSHER = { client_id: 'pusher', client_secret: 'pusher-secret' }
const FLAKY = { client_id: 'flaky', client_secret: 'flaky-secret' }
const POLLER = { client_id: 'poller', client_secret: 'poller-secret' }

let authz: CibaTestApp
let worker: CibaDeliveryWorker
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  authz = await createCibaTestApp({
    // Many requests by one client for one person: the pending cap and the request rate are off.
    env: { KEY_ENCRYPTION_SECRET: 'a key encryption secret for tests', CIBA_MAX_PENDING_PER_USER: '0', CIBA_RATE_LIMIT_PER_USER: '0' },
  })
  worker = authz.app.authz.workers.get(CIBA_DELIVERY_WORKER) as CibaDeliveryWorker
  const client = (clientId: string, mode: 'poll' | 'ping' | 'push', path?: string) => ({
    clientId,
    secrets: [{ value: `${clientId}-secret` }],
    allowedGrantTypes: [CIBA],
    allowedScopes: ['openid', 'profile'],
    cibaLifetime: LIFETIME,
    backchannelTokenDeliveryMode: mode,
    ...(path ? { backchannelClientNotificationEndpoint: `${base}${path}` } : {}),
  })
  await applySeed(authz.db, {
    clients: [
      client('pinger', 'ping', '/ping'),
      client('pusher', 'push', '/push'),
      client('flaky', 'push', '/fail'),
      client('poller', 'poll'),
    ],
  })
})
afterAll(async () => {
  await authz?.close()
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
})

async function start(client: Record<string, string>, token?: string) {
  const res = await startCiba(authz, {
    ...client,
    scope: 'openid',
    login_hint: 'alice',
    ...(token ? { client_notification_token: token } : {}),
  })
  expect(res.statusCode).toBe(200)
  expect(res.json().expires_in).toBe(LIFETIME)
  return { authReqId: res.json().auth_req_id as string, requestId: await lastRequestId(authz) }
}

/**
 * What the worker sends now with `token` as its Bearer (it waits for any run in progress first);
 * another test's failing endpoint is retried meanwhile, so only this request's deliveries count.
 */
async function sentNow(token: string): Promise<Received[]> {
  const before = received.length
  await worker.runOnce()
  return received.slice(before).filter((r) => r.authorization === `Bearer ${token}`)
}

async function outbox(requestId: string) {
  const { rows } = await authz.db.query(
    `SELECT mode, status, attempts, secret IS NULL AS secret_erased, payload IS NULL AS payload_erased, last_error, http_status
       FROM ciba_deliveries WHERE request_id = $1`,
    [requestId],
  )
  return rows
}

const audits = (event: string) => authz.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === event)

describe('a push request that expires undecided', () => {
  it('is pushed expired_token once, when its lifetime ends on the clock, and never again', async () => {
    const { authReqId, requestId } = await start(PUSHER, 'push-expiry-token')
    authz.clock.advance(LIFETIME - 1)
    expect(await sentNow('push-expiry-token')).toEqual([]) // not yet expired
    expect(await outbox(requestId)).toEqual([])

    authz.clock.advance(1)
    const sent = await sentNow('push-expiry-token')
    expect(sent.map((r) => [r.path, r.authorization])).toEqual([['/push', 'Bearer push-expiry-token']])
    expect(JSON.parse(sent[0]!.body)).toEqual({
      auth_req_id: authReqId,
      error: 'expired_token',
      error_description: 'the request expired before its tokens were issued',
    })
    expect(await outbox(requestId)).toEqual([
      { mode: 'push', status: 'delivered', attempts: 1, secret_erased: true, payload_erased: true, last_error: null, http_status: 204 },
    ])
    expect(audits('ciba.delivered').at(-1)).toMatchObject({
      client_id: 'pusher',
      ciba_request_id: requestId,
      delivery_mode: 'push',
      delivered: 'expired_token',
    })
    // The secret left the request with the notice: nothing to send a second time.
    const { rows } = await authz.db.query('SELECT delivery_secret IS NULL AS erased, status FROM ciba_requests WHERE id = $1', [requestId])
    expect(rows).toEqual([{ erased: true, status: 'pending' }])

    authz.clock.advance(3600)
    expect(await sentNow('push-expiry-token')).toEqual([])
    expect(await outbox(requestId)).toHaveLength(1)
    expect(authz.logs.join('\n')).not.toContain('push-expiry-token')
  })

  it('is retried through the outbox when the endpoint fails, on the clock', async () => {
    const { requestId } = await start(FLAKY, 'flaky-expiry-token')
    authz.clock.advance(LIFETIME)
    expect((await sentNow('flaky-expiry-token')).map((r) => r.path)).toEqual(['/fail'])
    // The error is made again at each attempt (it holds no token); the secret waits, sealed.
    expect(await outbox(requestId)).toEqual([
      {
        mode: 'push',
        status: 'pending',
        attempts: 1,
        secret_erased: false,
        payload_erased: true,
        last_error: 'http_status',
        http_status: 503,
      },
    ])
    const sealed = (await authz.db.query<{ secret: string }>('SELECT secret FROM ciba_deliveries WHERE request_id = $1', [requestId]))
      .rows[0]!
    expect(sealed.secret).toMatch(/^v1\./)
    expect(sealed.secret).not.toContain('flaky-expiry-token')
    authz.clock.advance(4)
    expect(await sentNow('flaky-expiry-token')).toEqual([]) // its back-off is 5 s
    authz.clock.advance(1)
    const again = await sentNow('flaky-expiry-token')
    expect(again.map((r) => r.path)).toEqual(['/fail'])
    expect(JSON.parse(again[0]!.body).error).toBe('expired_token')
    expect((await outbox(requestId))[0]).toMatchObject({ status: 'pending', attempts: 2 })
  })
})

describe('a ping request that expires undecided', () => {
  it('is pinged once, and its token request then answers expired_token', async () => {
    const { authReqId, requestId } = await start(PINGER, 'ping-expiry-token')
    authz.clock.advance(LIFETIME - 1)
    expect(await sentNow('ping-expiry-token')).toEqual([])
    authz.clock.advance(1)
    expect(await sentNow('ping-expiry-token')).toEqual([
      { path: '/ping', authorization: 'Bearer ping-expiry-token', body: JSON.stringify({ auth_req_id: authReqId }) },
    ])
    expect(await outbox(requestId)).toEqual([
      { mode: 'ping', status: 'delivered', attempts: 1, secret_erased: true, payload_erased: true, last_error: null, http_status: 204 },
    ])
    const token = await poll(authz, authReqId, PINGER)
    expect(token.statusCode).toBe(400)
    expect(token.json().error).toBe('expired_token')
    authz.clock.advance(3600)
    expect(await sentNow('ping-expiry-token')).toEqual([])
  })
})

describe('what is not notified of expiry', () => {
  it('a push request approved before its expiry: its tokens once, nothing when its lifetime ends', async () => {
    const { requestId } = await start(PUSHER, 'push-approved-token')
    authz.clock.advance(10)
    expect((await decide(authz, requestId, 'approve')).statusCode).toBe(200)
    const pushed = await sentNow('push-approved-token')
    expect(pushed).toHaveLength(1)
    expect(JSON.parse(pushed[0]!.body).access_token).toEqual(expect.any(String))
    authz.clock.advance(LIFETIME + 3600)
    expect(await sentNow('push-approved-token')).toEqual([])
    expect(await outbox(requestId)).toHaveLength(1)
  })

  it('a ping request denied before its expiry: one ping, nothing when its lifetime ends', async () => {
    const { requestId } = await start(PINGER, 'ping-denied-token')
    expect((await decide(authz, requestId, 'deny')).statusCode).toBe(200)
    expect(await sentNow('ping-denied-token')).toHaveLength(1)
    authz.clock.advance(LIFETIME + 3600)
    expect(await sentNow('ping-denied-token')).toEqual([])
    expect(await outbox(requestId)).toHaveLength(1)
  })

  it('a poll request: nothing queued (it has no endpoint)', async () => {
    const { requestId } = await start(POLLER)
    authz.clock.advance(LIFETIME)
    await worker.runOnce()
    expect(await outbox(requestId)).toEqual([])
    const { rows } = await authz.db.query('SELECT delivery_mode, delivery_secret FROM ciba_requests WHERE id = $1', [requestId])
    expect(rows).toEqual([{ delivery_mode: 'poll', delivery_secret: null }])
  })
})

describe('the decision racing the expiry', () => {
  it('a request whose expiry is queued cannot be decided, even by a replica whose clock lags', async () => {
    const store = createPgCibaRequestStore(authz.db)
    const { requestId } = await start(PUSHER, 'lagging-token')
    const expiresAt = authz.clock.now() + LIFETIME * 1000
    expect(await store.queueExpired(expiresAt, 20)).toBeGreaterThanOrEqual(1)
    const late = await store.decide(
      requestId,
      { status: 'approved', approvedScopes: ['openid'], authTime: expiresAt - 1000 },
      expiresAt - 1000,
    )
    expect(late).toBeUndefined()
    expect(await outbox(requestId)).toHaveLength(1)
    await worker.runOnce() // the notice goes out before the next test
  })

  it('30 trials of a decision and the expiry queued at once: exactly one delivery per request, and it matches the outcome', async () => {
    const store = createPgCibaRequestStore(authz.db)
    const bad: string[] = []
    for (let i = 0; i < 30; i++) {
      const { requestId } = await start(i % 2 === 0 ? PUSHER : PINGER, `race-token-${i}`)
      const expiresAt = authz.clock.now() + LIFETIME * 1000
      const deciding = () =>
        store.decide(requestId, { status: 'approved', approvedScopes: ['openid'], authTime: expiresAt - 1 }, expiresAt - 1)
      // Either one first (an embedded database runs them in the order they are sent).
      const [decided, queued] =
        i % 4 < 2
          ? await Promise.all([deciding(), store.queueExpired(expiresAt, 20)])
          : await Promise.all([store.queueExpired(expiresAt, 20), deciding()]).then(([q, d]) => [d, q] as const)
      const rows = await outbox(requestId)
      const { status } = (await store.findById(requestId))!
      const expected = decided ? 'approved' : 'pending'
      if (rows.length !== 1 || status !== expected || (decided === undefined) !== queued >= 1) {
        bad.push(`trial ${i}: decided=${decided?.status} queued=${queued} rows=${rows.length} status=${status}`)
      }
      await worker.runOnce()
      authz.clock.advance(1)
    }
    expect(bad).toEqual([])
  })
})
