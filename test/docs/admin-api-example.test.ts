// docs/admin-api.md's "Try it" and the README's "Admin API" blocks work as printed: run unchanged
// by bash against a real server with the demo seed and ADMIN_PORT set (only the addresses differ:
// the test server's ports are free ones, not 5000 and 5001). They create a client, generate its
// secret (which then works at the token endpoint), disable alice (whose password grant then fails)
// and rotate demo-backend's secret (the old one then fails, the new one is its only one).
import { spawnSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { createTestDb, usingServer, type TestDb } from '../helpers/db.js'
import { startServer, type ServerProcess } from '../helpers/server-process.js'

const PRINTED_BASE = 'http://localhost:5000'
const PRINTED_ADMIN = 'http://localhost:5001'

let server: ServerProcess | undefined
let testDb: TestDb | undefined
afterAll(async () => {
  await server?.stop()
  await testDb?.close()
})

/** The first ```sh block under `heading`. */
function shBlock(text: string, heading: string): string {
  const section = text.slice(text.indexOf(`\n${heading}\n`))
  const m = /```sh\n([\s\S]*?)```/.exec(section)
  if (!m) throw new Error(`no shell block under "${heading}"`)
  return m[1]!
}

async function adminPort(s: ServerProcess): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const m = /"port":(\d+),"msg":"admin API listening"/.exec(s.output())
    if (m) return Number(m[1])
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`the admin API did not listen:\n${s.output()}`)
}

function run(block: string, s: ServerProcess, admin: number) {
  const script = block.split(PRINTED_BASE).join(s.baseUrl).split(PRINTED_ADMIN).join(`http://127.0.0.1:${admin}`)
  return spawnSync('bash', ['-e', '-o', 'pipefail', '-c', script], { encoding: 'utf8', timeout: 60_000 })
}

const post = (s: ServerProcess, body: Record<string, string>, auth: string) =>
  fetch(`${s.baseUrl}/connect/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(auth).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body),
  })

describe('docs/admin-api.md and README "Admin API"', { timeout: 120_000 }, () => {
  it('run as printed against the demo seed: create a client, generate its secret, disable a user', async () => {
    testDb = usingServer() ? await createTestDb() : undefined
    server = await startServer({ ...(testDb?.env ?? {}), SEED_FILE: 'seed/demo.json', ADMIN_PORT: '0' })
    const admin = await adminPort(server)

    const docs = run(shBlock(await readFile('docs/admin-api.md', 'utf8'), '## Try it'), server, admin)
    expect(docs.stderr).toBe('')
    expect(docs.status).toBe(0)
    const [created, secret, disabled, ...rest] = docs.stdout.split(/(?<=\})(?=\{)/)
    expect(rest).toEqual([])
    expect(JSON.parse(created!)).toMatchObject({
      clientId: 'reports',
      clientName: 'Reports',
      allowedScopes: ['orders.read'],
      enabled: true,
    })
    expect(created).not.toContain('secrets')
    const { value } = JSON.parse(secret!) as { value: string }
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(JSON.parse(disabled!)).toMatchObject({ username: 'alice', enabled: false, sessionsEnded: 0 })

    const issued = await post(server, { grant_type: 'client_credentials', scope: 'orders.read' }, `reports:${value}`)
    expect(issued.status).toBe(200)
    const alice = await post(
      server,
      { grant_type: 'password', username: 'alice', password: 'alice-password' },
      'demo-legacy:demo-legacy-secret',
    )
    expect(alice.status).toBe(400)

    const backend = { grant_type: 'client_credentials', scope: 'orders.read' }
    expect((await post(server, backend, 'demo-backend:demo-backend-secret')).status).toBe(200)
    const readme = run(shBlock(await readFile('README.md', 'utf8'), '## Admin API'), server, admin)
    expect(readme.stderr).toBe('')
    expect(readme.status).toBe(0)
    const [disabledToo, rotated, ...more] = readme.stdout.split(/(?<=\})(?=\{)/)
    expect(more).toEqual([])
    expect(JSON.parse(disabledToo!)).toMatchObject({ username: 'alice', enabled: false })
    expect(JSON.parse(rotated!)).toMatchObject({ clientId: 'demo-backend', allowedGrantTypes: ['client_credentials'], enabled: true })
    expect((await post(server, backend, 'demo-backend:demo-backend-secret')).status).toBe(401)
    const token = (await (
      await post(server, { grant_type: 'client_credentials', scope: 'authz:admin' }, 'demo-admin:demo-admin-secret')
    ).json()) as {
      access_token: string
    }
    const secrets = await fetch(`http://127.0.0.1:${admin}/admin/clients/demo-backend/secrets`, {
      headers: { authorization: `Bearer ${token.access_token}` },
    })
    expect(await secrets.json()).toEqual({ items: [{}] })
  })
})
