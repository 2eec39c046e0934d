// The server process serves its metrics on METRICS_PORT (loopback by default), a listener of its
// own: the public port answers 404 there, and SIGTERM closes both.
import { afterEach, describe, expect, it } from 'vitest'
import { freePort } from '../helpers/free-port.js'
import { startServer, type ServerProcess } from '../helpers/server-process.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let server: ServerProcess | undefined
let testDb: TestDb | undefined
afterEach(async () => {
  await server?.stop()
  await testDb?.close()
  server = testDb = undefined
})

describe('METRICS_PORT', { timeout: 90_000 }, () => {
  it('serves /metrics on its own listener, not on the public one, and closes it on SIGTERM', async () => {
    testDb = await createTestDb()
    const metricsPort = await freePort()
    server = await startServer({ ...testDb.env, SEED_FILE: 'seed/demo.json', METRICS_PORT: String(metricsPort) })
    const token = await fetch(`${server.baseUrl}/connect/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from('demo-backend:demo-backend-secret').toString('base64')}`,
      },
      body: 'grant_type=client_credentials',
    })
    expect(token.status).toBe(200)
    expect((await fetch(`${server.baseUrl}/metrics`)).status).toBe(404)

    const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
    expect(scraped.status).toBe(200)
    const text = await scraped.text()
    expect(text).toContain('authz_tokens_issued_total{grant_type="client_credentials",token_type="access_token"} 1\n')
    expect(text).toContain('authz_http_requests_total{method="POST",route="/connect/token",status_code="200"} 1\n')
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m)
    expect(server.output()).toContain(`"address":"127.0.0.1","port":${metricsPort},"msg":"metrics listening"`)

    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
    await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow()
  })
})
