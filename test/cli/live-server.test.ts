// The CLI while a server runs on the embedded database: the commands go through the admin API the
// server serves to the CLI of its DATA_DIR (a 0600 socket and a 0600 file with a credential there),
// print what they print on the database itself, and what they change holds in the server at once.
// One server and few CLI runs: each is a child process.
import { spawnSync } from 'node:child_process'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LOCAL_ADMIN_FILE, LOCAL_ADMIN_SOCKET } from '../../src/admin/local-access.js'
import { MAIN } from '../helpers/built.js'
import { createTestDataDir, usingServer } from '../helpers/db.js'
import { startServer, waitForOutput, type ServerProcess } from '../helpers/server-process.js'
import { ROOT, runCli, type CliResult } from './run-cli.js'

const SLOW = 240_000
let dir: string
let dataDir: string
let server: ServerProcess
const env = () => ({ DATA_DIR: dataDir })
const cli = (args: string[], input?: string) => runCli(args, { env: env(), ...(input === undefined ? {} : { input }) })

/** What each listing printed while the server ran, to compare with the database's own afterwards. */
const READS = [
  ['clients', 'list'],
  ['clients', 'list', '--json'],
  ['clients', 'show', 'reports'],
  ['clients', 'show', 'demo-backend', '--json'],
  ['users', 'list'],
  ['keys', 'list', '--json'],
  ['consents', 'list', 'alice', '--json'],
  ['providers', 'list'],
  ['providers', 'list', '--json'],
  ['users', 'links', 'alice'],
  ['registration-tokens', 'list'],
  ['registration-tokens', 'list', '--json'],
  ['users', 'factors', 'alice'],
  ['migrate'],
]
const REFUSED = ['clients', 'add', 'broken', '--scope', 'no.such.scope']
const read: CliResult[] = []
let refused: CliResult

async function token(clientId: string, secret: string) {
  const res = await fetch(`${server.baseUrl}/connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${clientId}:${secret}`)}` },
    body: 'grant_type=client_credentials',
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

// Only the embedded database has a server that holds it: with DATABASE_URL the CLI writes the
// database itself (test/cli/commands.test.ts), so the PostgreSQL pass has nothing to run here.
const embedded = !usingServer()

beforeAll(async () => {
  if (!embedded) return
  dir = await mkdtemp(join(tmpdir(), 'authz-live-'))
  dataDir = join(dir, 'data')
  await createTestDataDir(dataDir)
  server = await startServer({ SEED_FILE: join(ROOT, 'seed/demo.json'), SHUTDOWN_DRAIN: '0' }, MAIN, { dataDir })
  await waitForOutput(server, 'admin API for the local CLI listening')
}, SLOW)
afterAll(async () => {
  if (!embedded) return
  await server?.stop()
  await rm(dir, { recursive: true, force: true })
})

describe.runIf(embedded)('the CLI while the server runs on the embedded database', { timeout: SLOW }, () => {
  it('finds the server through a file only its owner may read, with a credential it never logs', async () => {
    const file = join(dataDir, LOCAL_ADMIN_FILE)
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    expect((await stat(join(dataDir, LOCAL_ADMIN_SOCKET))).mode & 0o777).toBe(0o600)
    const access = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
    expect(access).toEqual({ pid: server.child.pid, socket: join(dataDir, LOCAL_ADMIN_SOCKET), credential: expect.any(String) })
    expect(access.credential).toMatch(/^[A-Za-z0-9_-]{43}$/) // 256 random bits
    expect(server.output()).not.toContain(access.credential)
  })

  it('adds, disables and removes through the server, which sees each change at once', async () => {
    const added = await cli(['clients', 'add', 'reports', '--name', 'Reports', '--scope', 'orders.read'])
    expect(added).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^[A-Za-z0-9_-]{43}\n$/),
      stderr: 'created client "reports"; its secret (shown once; only its hash is stored):\n',
    })
    const secret = added.stdout.trim()
    expect((await token('reports', secret)).status).toBe(200)

    expect(await cli(['clients', 'add', 'reports'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'authz clients: client "reports" exists: change it with a seed file (authz seed FILE)\n',
    })
    refused = await cli(REFUSED)
    expect(refused).toMatchObject({
      code: 1,
      stdout: '',
      stderr: expect.stringContaining('cannot add client "broken":\n  clients[0].allowedScopes[0]'),
    })

    const second = await cli(['clients', 'add-secret', 'reports', '--expires', '2099-01-01', '--description', 'rotation'])
    expect(second).toMatchObject({ code: 0, stderr: 'new secret for client "reports" (shown once; only its hash is stored):\n' })
    expect((await token('reports', second.stdout.trim())).status).toBe(200)

    expect(await cli(['clients', 'disable', 'reports'])).toEqual({ code: 0, stdout: 'disabled client "reports"\n', stderr: '' })
    expect(await token('reports', secret)).toEqual({ status: 401, body: expect.objectContaining({ error: 'invalid_client' }) })
    expect(await cli(['clients', 'remove', 'nobody'])).toEqual({ code: 1, stdout: '', stderr: 'authz clients: no client "nobody"\n' })

    expect(await cli(['users', 'add', 'carol', '--email', 'carol@example.com'], 'carol pass phrase\n')).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^created user "carol" \(subject [0-9a-f-]{36}\)\n$/),
      stderr: '',
    })
    expect(await cli(['users', 'disable', 'alice'])).toEqual({ code: 0, stdout: 'disabled user "alice"\n', stderr: '' })
    expect(await cli(['users', 'unlock', 'alice'])).toEqual({
      code: 0,
      stdout: 'user "alice" had no failed attempts to clear\n',
      stderr: '',
    })

    const rotated = await cli(['keys', 'rotate', '--alg', 'ES256'])
    expect(rotated.code).toBe(0)
    expect(rotated.stdout).toMatch(/^added 1 key\(s\); they sign from \d{4}-/)
    const kid = /^(\S+)\s+ES256\s+pending/m.exec(rotated.stdout)?.[1]
    expect(JSON.parse(rotated.stderr)).toMatchObject({ event: 'key.rotated', kid, alg: 'ES256', reason: 'rotation' })
    const jwks = (await (await fetch(`${server.baseUrl}/.well-known/openid-configuration/jwks`)).json()) as { keys: { kid: string }[] }
    expect(jwks.keys.map((k) => k.kid)).toContain(kid)

    // Recorded as the server's own admin changes, by the local CLI.
    const changes = server
      .output()
      .split('\n')
      .filter((l) => l.includes('"event":"admin.changed"'))
    expect(changes.find((l) => l.includes('"resource":"clients/reports"'))).toContain('"client_id":"local-cli"')
  })

  it('lists and approves a CIBA request through the server, and the polling client gets its tokens', async () => {
    const form = (body: Record<string, string>) =>
      fetch(`${server.baseUrl}${body.grant_type ? '/connect/token' : '/connect/ciba'}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: 'demo-ciba', client_secret: 'demo-ciba-secret', ...body }),
      })
    const asked = await form({ scope: 'openid profile', login_hint: 'carol', binding_message: 'TX-42' })
    expect(asked.status).toBe(200)
    const { auth_req_id } = (await asked.json()) as { auth_req_id: string }

    const listed = await cli(['ciba', 'list', '--json'])
    expect(listed.code).toBe(0)
    const lines = listed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ client_id: 'demo-ciba', username: 'carol', scopes: ['openid', 'profile'] }) // alice is disabled above
    expect(lines[0]!.binding_message).toBe('TX-42')
    const id = lines[0]!.request_id as string
    const subject = lines[0]!.subject as string
    expect(JSON.stringify(lines)).not.toContain(auth_req_id) // the list never shows the client's handle

    expect(await cli(['ciba', 'approve', id])).toEqual({
      code: 0,
      stdout: `approved request "${id}" (client demo-ciba, subject ${subject})\n`,
      stderr: '',
    })
    expect(await cli(['ciba', 'deny', id])).toEqual({ code: 1, stdout: '', stderr: `authz ciba: request "${id}" was already approved\n` })
    expect(await cli(['ciba', 'deny', 'no-such-request'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'authz ciba: no CIBA request "no-such-request"\n',
    })
    const tokens = await form({ grant_type: 'urn:openid:params:grant-type:ciba', auth_req_id })
    expect(tokens.status).toBe(200)
    expect(await tokens.json()).toMatchObject({ token_type: 'Bearer', scope: 'openid profile' })
    expect(await cli(['ciba', 'list'])).toEqual({ code: 0, stdout: 'no pending CIBA requests\n', stderr: '' })
  })

  it('makes, lists and revokes registration tokens and resets second factors through the server', async () => {
    const made = await cli(['registration-tokens', 'create', '--max-uses', '3', '--description', 'IDE team'])
    expect(made).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^id: [0-9a-f]{12}\nexpires: \d{4}-.+Z\nmax uses: 3\ntoken: [A-Za-z0-9_-]{43}\n$/),
      stderr: 'The token is shown only now: send it as "Authorization: Bearer TOKEN" to POST /connect/register.\n',
    })
    const id = /^id: (\S+)$/m.exec(made.stdout)![1]!
    const token = /^token: (\S+)$/m.exec(made.stdout)![1]!
    expect(server.output()).not.toContain(token)
    await cli(['registration-tokens', 'create', '--description', 'to revoke'])
    const listed = await cli(['registration-tokens', 'list', '--json'])
    const second = (JSON.parse(listed.stdout) as { id: string; description: string }[]).find((t) => t.description === 'to revoke')!
    expect(await cli(['registration-tokens', 'revoke', second.id])).toEqual({
      code: 0,
      stdout: `revoked registration token "${second.id}"\n`,
      stderr: '',
    })
    expect(await cli(['registration-tokens', 'revoke', second.id])).toEqual({
      code: 1,
      stdout: '',
      stderr: `authz registration-tokens: no registration token "${second.id}" that is not revoked already\n`,
    })
    expect((await cli(['registration-tokens', 'list'])).stdout).toMatch(new RegExp(`^${id} +usable +.* 0/3 +IDE team$`, 'm'))

    expect(await cli(['users', 'factors', 'carol'])).toEqual({ code: 0, stdout: 'user "carol" has no second factor\n', stderr: '' })
    expect(await cli(['users', 'reset-factors', 'carol'])).toEqual({
      code: 0,
      stdout: 'user "carol" had no second factor\n',
      stderr: '',
    })
    expect(await cli(['users', 'factors', 'nobody'])).toEqual({ code: 1, stdout: '', stderr: 'authz users: no user "nobody"\n' })
  })

  it('prints what the database itself prints, and leaves no file once the server has stopped', async () => {
    for (const args of READS) read.push(await cli(args))
    expect(read.map((r) => r.code)).toEqual(READS.map(() => 0))
    expect(read[2]!.stdout).toContain('enabled: false')
    expect(read[4]!.stdout).toMatch(/^alice +alice-0001 +no +- /m)
    expect(read[2]!.stdout).toContain(`  2. expires 2099-01-01T00:00:00.000Z (rotation)`)
    expect(read.slice(-7).map((r) => r.stdout)).toEqual([
      'no identity providers (add them to the seed file: identityProviders)\n',
      '[]\n',
      'user "alice" is linked to no identity provider\n',
      expect.stringMatching(/^ID +STATE +EXPIRES +USES +DESCRIPTION\n.* revoked .*to revoke\n$/s),
      expect.stringContaining('"state": "revoked"'),
      'user "alice" has no second factor\n',
      'database is up to date\n',
    ])

    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
    await expect(stat(join(dataDir, LOCAL_ADMIN_FILE))).rejects.toThrow(/ENOENT/)
    await expect(stat(join(dataDir, LOCAL_ADMIN_SOCKET))).rejects.toThrow(/ENOENT/)

    for (const [i, args] of READS.entries()) expect(await cli(args), args.join(' ')).toEqual(read[i])
    expect(await cli(REFUSED)).toEqual(refused)
  })

  it('ignores a file left by a server that is gone: its pid dead, or nobody at its socket', async () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid
    const file = join(dataDir, LOCAL_ADMIN_FILE)
    const socket = join(dataDir, LOCAL_ADMIN_SOCKET)
    await writeFile(file, JSON.stringify({ pid: dead, socket, credential: 'x'.repeat(43) }), { mode: 0o600 })
    expect(await cli(READS[0]!)).toEqual(read[0])
    // A live pid (this test process) but nothing listening: stale all the same.
    await writeFile(file, JSON.stringify({ pid: process.pid, socket, credential: 'x'.repeat(43) }), { mode: 0o600 })
    expect(await cli(['clients', 'enable', 'reports'])).toEqual({ code: 0, stdout: 'enabled client "reports"\n', stderr: '' })
  })
})
