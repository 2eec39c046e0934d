// The Standard Webhooks notification: received by a real HTTP server, HMAC verified the way the
// spec's libraries do it; retries with the same webhook-id; a dead receiver never delays or fails
// the client's request.
import { createHmac, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createManualClock } from '../../../src/domain/clock.js'
import { createLogNotifier, createWebhookNotifier, webhookSignature, type CibaNotification } from '../../../src/flows/ciba/notifier.js'
import { BANK, createCibaTestApp, startCiba, TEST_ISSUER, type CibaTestApp } from './harness.js'

interface Received {
  headers: IncomingMessage['headers']
  body: string
}

let server: Server
let url: string
const received: Received[] = []
let respond: (n: number) => number | 'hang' = () => 204
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      received.push({ headers: req.headers, body })
      const status = respond(received.length)
      if (status === 'hang') return
      res.writeHead(status).end()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
})

const KEY = randomBytes(24)
const SECRET = `whsec_${KEY.toString('base64')}`

/** Standard Webhooks verification, written from the spec, independent of the code under test. */
function verify(r: Received, key: Buffer, nowSeconds: number): boolean {
  const id = r.headers['webhook-id'] as string
  const ts = Number(r.headers['webhook-timestamp'])
  if (Math.abs(nowSeconds - ts) > 300) return false
  const expected = createHmac('sha256', key).update(`${id}.${ts}.${r.body}`).digest('base64')
  return (r.headers['webhook-signature'] as string).split(' ').some((s) => s === `v1,${expected}`)
}

async function until(cond: () => boolean, ms = 5000) {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((r) => setTimeout(r, 10))
  }
}

describe('CIBA notification webhook', () => {
  let authz: CibaTestApp
  beforeAll(async () => {
    authz = await createCibaTestApp({ env: { CIBA_NOTIFICATION_URL: url, CIBA_NOTIFICATION_SECRET: SECRET }, notifier: false })
  })
  afterAll(() => authz.close())

  it('POSTs the signed JSON body to CIBA_NOTIFICATION_URL', async () => {
    received.length = 0
    respond = () => 204
    const res = await startCiba(authz, { ...BANK, scope: 'openid', login_hint: 'alice', binding_message: 'K9' })
    expect(res.statusCode).toBe(200)
    await until(() => received.length === 1)
    const r = received[0]!
    expect(r.headers['content-type']).toBe('application/json')
    expect(r.headers['webhook-id']).toMatch(/^msg_[0-9a-f-]{36}$/)
    expect(verify(r, KEY, Math.floor(authz.clock.now() / 1000))).toBe(true)
    expect(verify(r, Buffer.from('wrong'), Math.floor(authz.clock.now() / 1000))).toBe(false)
    const body = JSON.parse(r.body) as CibaNotification
    const { rows } = await authz.db.query<{ id: string }>('SELECT id FROM ciba_requests')
    expect(body).toEqual({
      request_id: rows[0]!.id,
      subject: 'u-alice',
      username: 'alice',
      client_id: 'bank',
      client_name: 'Bank <App>',
      scopes: ['openid'],
      binding_message: 'K9',
      acr_values: [],
      expires_at: Math.floor(authz.clock.now() / 1000) + 120,
      approval_url: `${TEST_ISSUER}/ciba/approve?request=${rows[0]!.id}`,
    })
    expect(r.body).not.toContain(res.json().auth_req_id)
  })
})

describe('webhook notifier', () => {
  const n: CibaNotification = {
    request_id: 'r1',
    subject: 's',
    username: 'u',
    client_id: 'c',
    client_name: 'C',
    scopes: ['openid'],
    binding_message: null,
    acr_values: [],
    expires_at: 1,
    approval_url: 'https://x/ciba/approve?request=r1',
  }
  const logs: Array<{ level: string; obj: unknown; msg: string }> = []
  const logger = {
    info: (obj: unknown, msg: string) => void logs.push({ level: 'info', obj, msg }),
    warn: (obj: unknown, msg: string) => void logs.push({ level: 'warn', obj, msg }),
    error: (obj: unknown, msg: string) => void logs.push({ level: 'error', obj, msg }),
  } as never

  it('retries a failed delivery with the same webhook-id, then gives up and logs', async () => {
    received.length = 0
    logs.length = 0
    respond = (i) => (i < 3 ? 503 : 200)
    const notifier = createWebhookNotifier({ url, secret: 'plain-secret', clock: createManualClock(), logger, backoffMs: [10, 10] })
    notifier.notify(n)
    await notifier.drain()
    expect(received).toHaveLength(3)
    expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(1)
    // A secret without whsec_ is used as its UTF-8 bytes.
    expect(verify(received[2]!, Buffer.from('plain-secret'), Math.floor(createManualClock().now() / 1000))).toBe(true)
    expect(logs.map((l) => l.msg)).toEqual(['CIBA notification failed; retrying', 'CIBA notification failed; retrying'])

    received.length = 0
    logs.length = 0
    respond = () => 500
    notifier.notify(n)
    await notifier.drain()
    expect(received).toHaveLength(3)
    expect(logs.at(-1)).toEqual({
      level: 'error',
      msg: 'CIBA notification failed; giving up',
      obj: { request_id: 'r1', client_id: 'c', webhook_id: received[0]!.headers['webhook-id'], attempt: 3, failure: 'HTTP 500' },
    })
  })

  it('bounds each attempt with a timeout and never blocks notify()', async () => {
    received.length = 0
    logs.length = 0
    respond = () => 'hang'
    const notifier = createWebhookNotifier({ url, secret: SECRET, clock: createManualClock(), logger, timeoutMs: 100, backoffMs: [] })
    const before = Date.now()
    notifier.notify(n)
    expect(Date.now() - before).toBeLessThan(50)
    await notifier.drain()
    expect(logs.at(-1)!.obj).toMatchObject({ failure: 'timeout', attempt: 1 })
  })

  it('without a webhook, logs the approval URL at info level', () => {
    logs.length = 0
    createLogNotifier({ logger }).notify(n)
    expect(logs).toEqual([
      {
        level: 'info',
        msg: 'CIBA approval requested: open approval_url to approve or deny',
        obj: { request_id: 'r1', client_id: 'c', subject: 's', approval_url: 'https://x/ciba/approve?request=r1' },
      },
    ])
  })

  it('signs as the spec says', () => {
    const key = Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64')
    expect(webhookSignature(`whsec_${key.toString('base64')}`, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    )
  })
})
