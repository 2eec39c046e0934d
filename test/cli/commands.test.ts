// The admin CLI against a real database, as child processes: embedded (a temporary DATA_DIR) or
// the test server's database when DATABASE_URL is set. Commands are batched: each costs a process
// start, and embedded a PGlite start.
import { spawnSync } from 'node:child_process'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Db } from '../../src/db/db.js'
import { createPgliteDb } from '../../src/db/pglite.js'
import { createPgClientStore } from '../../src/stores/clients.postgres.js'
import { createPgUserStore } from '../../src/stores/users.postgres.js'
import { secretMatches } from '../../src/tokens/handles.js'
import { verifyPassword } from '../../src/interaction/passwords.js'
import { createTestDataDir, createTestDb, usingServer, type TestDb } from '../helpers/db.js'
import { runCli } from './run-cli.js'

const SLOW = 180_000
let dir: string
let env: Record<string, string>
let testDb: TestDb | undefined

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'authz-cli-'))
  if (usingServer()) {
    testDb = await createTestDb()
    env = { ...testDb.env }
  } else {
    // Start from the migrated template (a fresh PGlite initdb in the child costs 10 s or more).
    env = { DATA_DIR: await createTestDataDir(join(dir, 'data')) }
  }
  // As a new deployment's database: no signing keys yet, so the first command creates them.
  await withDb((db) => db.query('DELETE FROM signing_keys'))
})
afterAll(async () => {
  await testDb?.close()
  await rm(dir, { recursive: true, force: true })
})

/** The database the CLI wrote to, opened in this process once the CLI is done with it. */
async function withDb<T>(fn: (db: Db) => Promise<T>): Promise<T> {
  if (testDb) return fn(testDb.db)
  const db = await createPgliteDb({ dataDir: env.DATA_DIR })
  try {
    return await fn(db)
  } finally {
    await db.close()
  }
}

describe('authz against a database', () => {
  let secret = ''

  it('migrates, takes over a stale DATA_DIR lock, seeds twice, lists and shows clients', { timeout: SLOW }, async () => {
    if (!testDb) {
      // A lock left by a process that died: taken over.
      const dead = spawnSync(process.execPath, ['-e', '0']).pid
      await writeFile(join(env.DATA_DIR!, 'authz.lock'), `${dead}\n`)
    }
    const migrate = await runCli(['migrate'], { env })
    expect(migrate).toEqual({ code: 0, stdout: 'database is up to date\n', stderr: '' })
    if (!testDb) expect(await readdir(env.DATA_DIR!)).not.toContain('authz.lock') // released on exit

    const line =
      'seed applied from seed/demo.json: 2 api scopes, 1 api resources, 4 identity resources, 8 clients, 1 users, 0 identity providers\n'
    expect(await runCli(['seed', 'seed/demo.json'], { env })).toEqual({ code: 0, stdout: line, stderr: '' })
    expect(await runCli(['seed', 'seed/demo.json'], { env })).toEqual({ code: 0, stdout: line, stderr: '' })

    const bad = join(dir, 'bad.json')
    await writeFile(bad, JSON.stringify({ clients: [{ clientId: 'x', secrets: [{ vaule: 's' }] }] }))
    expect(await runCli(['seed', bad], { env })).toEqual({
      code: 1,
      stdout: '',
      stderr: `invalid seed file ${bad}:\n  clients[0].secrets[0]: Unrecognized key: "vaule"\n  clients[0].secrets[0]: needs exactly one of "value" or "sha256"\n`,
    })

    const list = await runCli(['clients', 'list'], { env })
    expect(list.code).toBe(0)
    expect(list.stdout.split('\n').map((l) => l.split(/\s+/)[0])).toEqual([
      'CLIENT',
      'demo-admin',
      'demo-backend',
      'demo-ciba',
      'demo-device',
      'demo-gateway',
      'demo-legacy',
      'demo-reference',
      'demo-web',
      '',
    ])
    const show = await runCli(['clients', 'show', 'demo-backend', '--json'], { env })
    expect(show.code).toBe(0)
    expect(JSON.parse(show.stdout)).toEqual({
      clientId: 'demo-backend',
      clientName: null,
      enabled: true,
      requireClientSecret: true,
      allowedGrantTypes: ['client_credentials'],
      allowedScopes: ['orders.read', 'orders.write'],
      redirectUris: [],
      postLogoutRedirectUris: [],
      requirePkce: true,
      requireDPoP: false,
      allowOfflineAccess: false,
      accessTokenType: 'jwt',
      accessTokenLifetime: null,
      refreshTokenUsage: 'oneTimeOnly',
      refreshTokenExpiration: 'absolute',
      absoluteRefreshTokenLifetime: 2592000,
      slidingRefreshTokenLifetime: 1296000,
      cibaLifetime: null,
      pollingInterval: null,
      identityProviderRestrictions: [],
      enableLocalLogin: true,
      requireMfa: false,
      allowedTenants: [],
      allowedCorsOrigins: [],
      allowedSubjectTokenClients: [],
      allowedExchangeAudiences: [],
      backChannelLogoutUri: null,
      backChannelLogoutSessionRequired: true,
      requireConsent: false,
      alwaysIncludeUserClaimsInIdToken: true,
      jwks: null,
      jwksUri: null,
      tokenEndpointAuthMethod: null,
      backchannelTokenDeliveryMode: 'poll',
      backchannelClientNotificationEndpoint: null,
      selfRegistered: null,
      requirePushedAuthorization: false,
      requireRequestObject: false,
      profile: null,
      secrets: [{ expiresAt: null, description: null }],
    })

    // A public client's requirePkce false is applied as written, with a warning that it has no effect.
    const lax = join(dir, 'lax.json')
    await writeFile(lax, JSON.stringify({ clients: [{ clientId: 'lax-spa', requireClientSecret: false, requirePkce: false }] }))
    expect(await runCli(['seed', lax], { env })).toEqual({
      code: 0,
      stdout: `seed applied from ${lax}: 0 api scopes, 0 api resources, 0 identity resources, 1 clients, 0 users, 0 identity providers\n`,
      stderr:
        'warning: clients[0].requirePkce: client "lax-spa" is public (requireClientSecret false), so PKCE is required of it anyway (RFC 9700 §2.1.1); false has no effect\n',
    })
  })

  it('adds a secret, removes a client, adds a user with the password on stdin', { timeout: SLOW }, async () => {
    const add = await runCli(['clients', 'add-secret', 'demo-backend', '--expires', '2031-01-01T00:00:00Z', '--description', 'rotation'], {
      env,
    })
    expect(add.code).toBe(0)
    expect(add.stderr).toBe('new secret for client "demo-backend" (shown once; only its hash is stored):\n')
    expect(add.stdout).toMatch(/^[A-Za-z0-9_-]{43}\n$/)
    secret = add.stdout.trim()

    expect(await runCli(['clients', 'remove', 'demo-reference'], { env })).toEqual({
      code: 0,
      stdout: 'removed client "demo-reference"\n',
      stderr: '',
    })
    expect(await runCli(['clients', 'show', 'demo-reference'], { env })).toEqual({
      code: 1,
      stdout: '',
      stderr: 'authz clients: no client "demo-reference"\n',
    })

    const user = await runCli(['users', 'add', 'bob', '--subject', 'bob-0001', '--email', 'bob@example.com', '--name', 'Bob'], {
      env,
      input: 'bob pass phrase\n',
    })
    expect(user).toEqual({ code: 0, stdout: 'created user "bob" (subject bob-0001)\n', stderr: '' })
    expect(await runCli(['users', 'add', 'carol'], { env, input: '' })).toEqual({
      code: 1,
      stdout: '',
      stderr: 'authz users: no password given (pipe it on stdin or type it at the prompt)\n',
    })
  })

  it('rotates and lists signing keys', { timeout: SLOW }, async () => {
    const rotate = await runCli(['keys', 'rotate', '--alg', 'ES256'], { env })
    expect(rotate.code).toBe(0)
    expect(rotate.stdout).toMatch(/^added 1 key\(s\); they sign from \S+Z\nKID +ALG +STATUS/)
    expect(rotate.stdout.split('\n')[2]).toMatch(/ ES256 +pending /)
    // The audit events, as the server writes them, on stderr: the keys created on first use (as
    // the server creates them), then the new one; never key material.
    const audit = rotate.stderr
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(
      audit
        .slice(0, -1)
        .map((e) => [e.event, e.alg, e.reason])
        .sort(),
    ).toEqual([
      ['key.rotated', 'ES256', 'first_key'],
      ['key.rotated', 'RS256', 'first_key'],
    ])
    expect(audit.slice(-1)).toEqual([
      {
        level: 30,
        time: expect.any(String),
        log: 'audit',
        audit_version: 1,
        event: 'key.rotated',
        outcome: 'success',
        kid: rotate.stdout.split('\n')[2]!.split(/ +/)[0],
        alg: 'ES256',
        reason: 'rotation',
        msg: 'signing key created',
      },
    ])
    expect(await runCli(['keys', 'rotate', '--alg', 'HS256'], { env })).toMatchObject({
      code: 1,
      stderr: 'authz keys: --alg: must be one of ES256, RS256, PS256, EdDSA\n',
    })

    const after = JSON.parse((await runCli(['keys', 'list', '--json'], { env })).stdout) as Array<{ alg: string; status: string }>
    // The two initial keys (created on first use, as the server does), plus the pending one.
    expect(after.map((k) => [k.alg, k.status]).sort()).toEqual([
      ['ES256', 'current'],
      ['ES256', 'pending'],
      ['RS256', 'current'],
    ])
  })

  it('stored only hashes: the printed secret and the piped password verify', { timeout: SLOW }, async () => {
    await withDb(async (db) => {
      const backend = await createPgClientStore(db).findById('demo-backend')
      const added = backend?.secrets.find((s) => s.description === 'rotation')
      expect(added?.expiresAt).toBe(Date.UTC(2031, 0, 1))
      expect(secretMatches(secret, added?.valueHash ?? '')).toBe(true)
      const bob = await createPgUserStore(db).findByUsername('bob')
      expect(bob?.claims).toEqual({ email: 'bob@example.com', name: 'Bob' })
      expect(await verifyPassword('bob pass phrase', bob?.passwordHash)).toBe(true)
      const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM client_secrets WHERE value_hash = $1`, [secret])
      expect(rows).toEqual([{ n: 0 }])
    })
  })

  it.skipIf(usingServer())('refuses an embedded DATA_DIR held by a live process', { timeout: SLOW }, async () => {
    // This test process is alive and is not the CLI child: its pid in the lock means "in use".
    await writeFile(join(env.DATA_DIR!, 'authz.lock'), `${process.pid}\n`)
    try {
      expect(await runCli(['clients', 'list'], { env })).toEqual({
        code: 1,
        stdout: '',
        stderr: `authz clients: the embedded database in ${env.DATA_DIR} is open in another authz process (pid ${process.pid}), and it serves one process at a time: stop that process (kill -TERM ${process.pid}), run this, then start the server again; or run on PostgreSQL (DATABASE_URL), where the CLI works while servers run\n`,
      })
    } finally {
      await rm(join(env.DATA_DIR!, 'authz.lock'))
    }
  })
})
