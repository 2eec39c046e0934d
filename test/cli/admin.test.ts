// Daily administration with the CLI: clients add/disable/enable, users list/disable/enable/remove,
// run in-process against a test database and checked through the server's own endpoints (the
// CLI's process plumbing and the DATA_DIR lock are covered by commands.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientsCommand } from '../../src/cli/clients.js'
import { CliError, UsageError, type CliContext } from '../../src/cli/context.js'
import { usersCommand } from '../../src/cli/users.js'
import { createManualClock } from '../../src/domain/clock.js'
import { applySeed, SeedError } from '../../src/seed/apply.js'
import { createPgClientStore } from '../../src/stores/clients.postgres.js'
import { createPgUserStore } from '../../src/stores/users.postgres.js'
import { secretMatches } from '../../src/tokens/handles.js'
import { createTestApp, FORM, type TestApp } from '../helpers/app.js'

const T0 = Date.UTC(2026, 2, 1, 12)
const clock = createManualClock(T0)
let authz: TestApp
let out: string[] = []
let err: string[] = []
const ctx = (): CliContext => ({
  out: (l) => void out.push(l),
  err: (l) => void err.push(l),
  stdin: process.stdin,
  clock,
  config: () => {
    throw new Error('not needed')
  },
  db: async () => authz.db,
})
async function run(command: typeof clientsCommand, ...args: string[]) {
  out = []
  err = []
  await command.run(args, ctx())
  return out
}
const clients = (...args: string[]) => run(clientsCommand, ...args)
const users = (...args: string[]) => run(usersCommand, ...args)

async function token(clientId: string, secret: string, body = 'grant_type=client_credentials') {
  const res = await authz.app.inject({
    method: 'POST',
    url: '/connect/token',
    headers: { ...FORM, authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}` },
    payload: body,
  })
  return { status: res.statusCode, body: res.json<Record<string, unknown>>() }
}

beforeAll(async () => {
  authz = await createTestApp()
  await applySeed(authz.db, {
    apiScopes: [{ name: 'orders.read' }],
    clients: [
      { clientId: 'legacy', secrets: [{ value: 'legacy-secret' }], allowedGrantTypes: ['password'], allowedScopes: ['orders.read'] },
    ],
    users: [
      { subjectId: 'u-alice', username: 'alice', password: 'alice-password', claims: { email: 'alice@example.com' } },
      { subjectId: 'u-bob', username: 'bob', password: 'bob-password' },
    ],
  })
})
afterAll(() => authz.close())

describe('authz clients add', () => {
  it('creates a client with the flags given and prints its generated secret once, on stdout', async () => {
    expect(await clients('add', 'reports', '--name', 'Reports', '--scope', 'orders.read', '--token-type', 'reference')).toHaveLength(1)
    const secret = out[0]!
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(err).toEqual(['created client "reports"; its secret (shown once; only its hash is stored):'])
    const stored = await createPgClientStore(authz.db).findById('reports')
    expect(stored).toMatchObject({
      clientName: 'Reports',
      enabled: true,
      requireClientSecret: true,
      allowedGrantTypes: ['client_credentials'],
      allowedScopes: ['orders.read'],
      accessTokenType: 'reference',
      redirectUris: [],
      allowOfflineAccess: false,
    })
    expect(stored!.secrets).toHaveLength(1)
    expect(secretMatches(secret, stored!.secrets[0]!.valueHash)).toBe(true)
    const res = await token('reports', secret, 'grant_type=client_credentials&scope=orders.read')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ token_type: 'Bearer', scope: 'orders.read' })
  })

  it('adds a public client without a secret', async () => {
    expect(await clients('add', 'spa', '--public', '--grant', 'password', '--scope', 'orders.read')).toEqual([
      'created public client "spa"',
    ])
    expect(await createPgClientStore(authz.db).findById('spa')).toMatchObject({
      requireClientSecret: false,
      secrets: [],
      allowedGrantTypes: ['password'],
    })
  })

  it('refuses an existing client, an unknown scope and a bad token type, changing nothing', async () => {
    await expect(clients('add', 'reports')).rejects.toThrow(
      new CliError('client "reports" exists: change it with a seed file (authz seed FILE)'),
    )
    const unknown = await clients('add', 'x', '--scope', 'nope').catch((e: unknown) => e)
    expect(unknown).toBeInstanceOf(SeedError)
    expect((unknown as Error).message).toMatch(/^cannot add client "x":\n {2}clients\[0\]\.allowedScopes\[0\]: /)
    await expect(clients('add', 'y', '--token-type', 'opaque')).rejects.toBeInstanceOf(UsageError)
    expect(await createPgClientStore(authz.db).findById('x')).toBeUndefined()
    expect(await createPgClientStore(authz.db).findById('y')).toBeUndefined()
  })

  it('refuses a code-flow client without a redirect URI, or with one that would hand the code to script', async () => {
    // Silently created, such a client could never finish a sign-in; with javascript: it would run
    // script in the page that receives the code.
    await expect(clients('add', 'web', '--grant', 'authorization_code', '--scope', 'orders.read')).rejects.toMatchObject({
      name: 'UsageError',
      message: '--grant authorization_code needs at least one --redirect-uri (the exact redirect_uri the app sends)',
    })
    const script = await clients('add', 'web', '--grant', 'authorization_code', '--redirect-uri', 'javascript:alert(1)').catch(
      (e: unknown) => e,
    )
    expect(script).toBeInstanceOf(SeedError)
    expect((script as SeedError).problems).toEqual([
      'clients[0].redirectUris[0]: client web: scheme "javascript:" is not allowed: use https, http only for localhost, 127.0.0.1 or [::1], or a native app\'s private-use scheme named after a domain it controls, such as com.example.app:/callback (RFC 8252 §7)',
    ])
    expect(await createPgClientStore(authz.db).findById('web')).toBeUndefined()

    expect(await clients('add', 'web', '--grant', 'authorization_code', '--redirect-uri', 'https://web.example/cb')).toHaveLength(1)
    expect(await createPgClientStore(authz.db).findById('web')).toMatchObject({
      allowedGrantTypes: ['authorization_code'],
      redirectUris: ['https://web.example/cb'],
    })
  })
})

describe('authz clients disable / enable', () => {
  it('refuses the client at the token endpoint while disabled, and accepts it again when enabled', async () => {
    const secret = (await clients('add', 'batch', '--scope', 'orders.read'))[0]!
    const body = 'grant_type=client_credentials&scope=orders.read'
    expect((await token('batch', secret, body)).status).toBe(200)
    expect(await clients('disable', 'batch')).toEqual(['disabled client "batch"'])
    expect(await token('batch', secret, body)).toMatchObject({ status: 401, body: { error: 'invalid_client' } })
    expect(await clients('enable', 'batch')).toEqual(['enabled client "batch"'])
    expect((await token('batch', secret, body)).status).toBe(200)
    await expect(clients('disable', 'nobody')).rejects.toThrow(new CliError('no client "nobody"'))
  })
})

describe('authz users', () => {
  const password = (username: string, pw: string) =>
    token('legacy', 'legacy-secret', `grant_type=password&username=${username}&password=${pw}&scope=orders.read`)

  it('lists users with their lockout', async () => {
    await authz.db.query(
      `INSERT INTO failure_counters (kind, name, source, failures, blocks, blocked_until, expires_at)
       VALUES ('user', 'u-bob', '', 10, 1, $1::timestamptz, $2::timestamptz)`,
      [new Date(T0 + 300_000).toISOString(), new Date(T0 + 86_400_000).toISOString()],
    )
    expect(await users('list')).toEqual([
      'USERNAME  SUBJECT  ENABLED  LOCKED UNTIL              EMAIL',
      'alice     u-alice  yes      -                         alice@example.com',
      'bob       u-bob    yes      2026-03-01T12:05:00.000Z  ',
    ])
    expect(JSON.parse((await users('list', '--json')).join('\n'))).toEqual([
      { username: 'alice', subject: 'u-alice', enabled: true, lockedUntil: null, email: 'alice@example.com', name: null },
      { username: 'bob', subject: 'u-bob', enabled: true, lockedUntil: '2026-03-01T12:05:00.000Z', email: null, name: null },
    ])
    expect(await users('unlock', 'bob')).toEqual(['unlocked user "bob"'])
    expect((await users('list'))[2]).toMatch(/^bob +u-bob +yes +- *$/)
  })

  it('disables and enables a user: the password grant is refused meanwhile', async () => {
    expect((await password('alice', 'alice-password')).status).toBe(200)
    expect(await users('disable', 'alice')).toEqual(['disabled user "alice"'])
    expect(await password('alice', 'alice-password')).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    expect((await users('list'))[1]).toMatch(/^alice +u-alice +no /)
    expect(await users('enable', 'alice')).toEqual(['enabled user "alice"'])
    expect((await password('alice', 'alice-password')).status).toBe(200)
    await expect(users('disable', 'nobody')).rejects.toThrow(new CliError('no user "nobody"'))
  })

  it('removes a user, who can no longer sign in', async () => {
    expect(await users('remove', 'bob')).toEqual(['removed user "bob" (subject u-bob)'])
    expect(await createPgUserStore(authz.db).findByUsername('bob')).toBeUndefined()
    expect(await password('bob', 'bob-password')).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    await expect(users('remove', 'bob')).rejects.toThrow(new CliError('no user "bob"'))
    await expect(users('remove')).rejects.toBeInstanceOf(UsageError)
  })
})
