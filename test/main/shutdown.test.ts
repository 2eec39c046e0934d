// Graceful shutdown: on SIGTERM the server stops accepting, lets in-flight
// requests finish within SHUTDOWN_TIMEOUT, closes the database and exits 0.
import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { startServer, waitForOutput, type ServerProcess } from '../helpers/server-process.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let server: ServerProcess | undefined
let testDb: TestDb | undefined
afterEach(async () => {
  await server?.stop()
  await testDb?.close()
  server = testDb = undefined
})

/** Sends the head of a POST whose body is still to come: a request in flight. */
function startSlowRequest(port: number) {
  const socket = connect(port, '127.0.0.1')
  let response = ''
  socket.on('data', (d) => (response += d.toString()))
  const done = new Promise<string>((resolve) => socket.on('close', () => resolve(response)))
  const body = 'grant_type=client_credentials'
  socket.write(
    `POST /connect/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
  )
  return { finish: () => socket.write(body.slice(5)), done }
}

/** True once a request to `url` fails to connect, polling until `ms` have passed; false if it never does. */
async function refusedWithin(url: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    try {
      await fetch(url, { headers: { connection: 'close' } })
    } catch {
      return true
    }
    await new Promise((r) => setTimeout(r, 20))
  }
  return false
}

describe('graceful shutdown', { timeout: 60_000 }, () => {
  it('finishes the request in flight, refuses new ones, and exits 0 (no drain period)', async () => {
    testDb = await createTestDb()
    // SHUTDOWN_DRAIN=0 stops accepting at once; test/main/drain.test.ts covers the drain.
    server = await startServer({ ...testDb.env, SEED_FILE: 'seed/demo.json', SHUTDOWN_DRAIN: '0' })
    const slow = startSlowRequest(server.port)
    await waitForOutput(server, '"url":"/connect/token"') // the head has arrived: a request in flight
    server.child.kill('SIGTERM')
    await waitForOutput(server, '"msg":"shutting down"')
    // The listener closes right after (no drain): within a bound, a new connection is refused.
    await expect(refusedWithin(`${server.baseUrl}/health/live`, 10_000)).resolves.toBe(true)
    slow.finish()
    const response = await slow.done
    expect(response).toMatch(/^HTTP\/1\.1 401 /) // no client credentials: answered, not dropped
    expect(response).toContain('"error":"invalid_client"')
    expect(await server.exited).toBe(0)
    expect(server.output()).toContain('"msg":"stopped"')
  })

  it('gives up on a request that never completes after SHUTDOWN_TIMEOUT and exits 1', async () => {
    testDb = await createTestDb()
    server = await startServer({ ...testDb.env, SEED_FILE: 'seed/demo.json', SHUTDOWN_TIMEOUT: '1' })
    startSlowRequest(server.port) // never finished
    await waitForOutput(server, '"url":"/connect/token"')
    const t0 = Date.now()
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(1)
    expect(Date.now() - t0).toBeLessThan(5000)
    expect(server.output()).toContain('shutdown timed out')
  })
})
