// Bounds on every connection: a client that sends half a head or half a body, or holds an idle
// keep-alive connection, is answered 408 (OAuth JSON) and disconnected after the configured
// timeout, and a cap on open connections keeps held sockets from exhausting file descriptors.
// Real sockets with timeouts of about a second (transport time, not protocol time).
import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.js'

let authz: TestApp | undefined
const sockets: Socket[] = []
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy()
  await authz?.close()
  authz = undefined
})

async function listen(env: Record<string, string>): Promise<number> {
  authz = await createTestApp({ env })
  await authz.app.listen({ port: 0, host: '127.0.0.1' })
  return (authz.app.server.address() as { port: number }).port
}

interface Held {
  socket: Socket
  /** Everything the server sent, once it closed the connection; and when that was. */
  closed: Promise<{ text: string; ms: number }>
}

function open(port: number, data: string): Held {
  const socket = connect(port, '127.0.0.1')
  sockets.push(socket)
  const t0 = Date.now()
  let text = ''
  socket.on('data', (d) => (text += d.toString()))
  socket.on('error', () => {})
  socket.write(data)
  return { socket, closed: new Promise((resolve) => socket.on('close', () => resolve({ text, ms: Date.now() - t0 }))) }
}

const HALF_BODY =
  'POST /connect/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 29\r\n\r\ngrant_type=cli'
const HALF_HEAD = 'POST /connect/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: applica'

function expect408(text: string) {
  expect(text).toMatch(/^HTTP\/1\.1 408 /)
  expect(text).toMatch(/\r\ncache-control: no-store\r\n/i)
  expect(text.slice(text.indexOf('\r\n\r\n') + 4)).toBe(
    JSON.stringify({ error: 'invalid_request', error_description: 'the request was not received in time' }),
  )
}

describe('HTTP timeouts and connection cap', { timeout: 20_000 }, () => {
  it('answers 408 and closes a request whose body stops halfway, after HTTP_REQUEST_TIMEOUT', async () => {
    const port = await listen({ HTTP_HEADERS_TIMEOUT: '0.5', HTTP_REQUEST_TIMEOUT: '1' })
    const { text, ms } = await open(port, HALF_BODY).closed
    expect408(text)
    expect(ms).toBeGreaterThanOrEqual(900)
    expect(ms).toBeLessThan(4000)
  })

  it('answers 408 and closes a request whose head stops halfway, after HTTP_HEADERS_TIMEOUT', async () => {
    const port = await listen({ HTTP_HEADERS_TIMEOUT: '0.5', HTTP_REQUEST_TIMEOUT: '10' })
    const { text, ms } = await open(port, HALF_HEAD).closed
    expect408(text)
    expect(ms).toBeLessThan(3000)
  })

  it('closes an idle keep-alive connection after HTTP_KEEP_ALIVE_TIMEOUT', async () => {
    const port = await listen({ HTTP_KEEP_ALIVE_TIMEOUT: '0.5' })
    const held = open(port, 'GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    const { text, ms } = await held.closed
    expect(text).toMatch(/^HTTP\/1\.1 200 /)
    expect(text).toMatch(/\r\nkeep-alive: timeout=0\r\n|\r\nkeep-alive: timeout=1\r\n/i)
    expect(ms).toBeLessThan(3000)
  })

  it('refuses connections beyond HTTP_MAX_CONNECTIONS, and answers again once held ones time out', async () => {
    const port = await listen({ HTTP_MAX_CONNECTIONS: '3', HTTP_HEADERS_TIMEOUT: '1', HTTP_REQUEST_TIMEOUT: '1' })
    const held = [open(port, HALF_BODY), open(port, HALF_BODY), open(port, HALF_HEAD)]
    await new Promise((r) => setTimeout(r, 100)) // transport: let the three be accepted
    const refused = await open(port, 'GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n').closed
    expect(refused.text).toBe('') // dropped at accept: nothing was read, nothing answered
    for (const h of held) expect408((await h.closed).text)
    const res = await fetch(`http://127.0.0.1:${port}/health/live`)
    expect(res.status).toBe(200)
  })
})
