// authz seed FILE, in-process against a test database: one run reports every problem of the file,
// those it shows by itself and those against what is stored, each with its JSON path (the child
// process and its exit codes are covered by commands.test.ts).
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CliContext } from '../../src/cli/context.js'
import { seedCommand } from '../../src/cli/seed.js'
import { createManualClock } from '../../src/domain/clock.js'
import { applySeed, SeedError } from '../../src/seed/apply.js'
import { createPgClientStore } from '../../src/stores/clients.postgres.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let authz: TestDb
let dir: string
let out: string[] = []
let err: string[] = []
let opened = 0
const ctx = (db: () => Promise<TestDb['db']>): CliContext => ({
  out: (l) => void out.push(l),
  err: (l) => void err.push(l),
  stdin: process.stdin,
  clock: createManualClock(0),
  config: () => {
    throw new Error('not needed')
  },
  db: async () => {
    opened++
    return db()
  },
})

async function seed(content: unknown, db: () => Promise<TestDb['db']> = async () => authz.db): Promise<unknown> {
  out = []
  err = []
  const file = join(dir, `seed-${Math.random().toString(36).slice(2)}.json`)
  await writeFile(file, JSON.stringify(content))
  return seedCommand.run([file], ctx(db)).then(
    () => file,
    (e: unknown) => e,
  )
}

beforeAll(async () => {
  authz = await createTestDb()
  dir = await mkdtemp(join(tmpdir(), 'authz-seed-cli-'))
  await applySeed(authz.db, {
    identityResources: ['openid'],
    users: [{ subjectId: 'alice-0001', username: 'alice' }],
  })
})
afterAll(async () => {
  await authz.close()
  await rm(dir, { recursive: true, force: true })
})

const FILE = {
  clients: [
    {
      clientId: 'web',
      allowedGrantTypes: ['authorization_code'],
      allowedScopes: ['openid', 'orders.read'],
      redirectUris: ['localhost:3000/cb'],
      enabled: 'yes',
    },
    { clientId: 'web' },
  ],
  users: [{ subjectId: 'alice-1', username: 'alice', pasword: 'x' }],
}

describe('authz seed FILE', () => {
  it("reports the file's own problems and those against the database in one run, and changes nothing", async () => {
    // One problem per run made an operator fix, rerun and fix again; each run could meet the next.
    const e = await seed(FILE)
    expect(e).toBeInstanceOf(SeedError)
    expect((e as SeedError).message.split('\n').slice(1)).toEqual([
      '  clients[0].enabled: Invalid input: expected boolean, received string',
      '  clients[0].redirectUris[0]: client web: scheme "localhost:" is not allowed: use https, http only for localhost, 127.0.0.1 or [::1], or a native app\'s private-use scheme named after a domain it controls, such as com.example.app:/callback (RFC 8252 §7)',
      '  users[0]: Unrecognized key: "pasword"',
      '  clients[1].clientId: duplicate client "web"',
      '  clients[0].allowedScopes[1]: "orders.read" is neither an api scope nor an identity resource',
      '  users[0].subjectId: user "alice" has subject "alice-0001", and a subject never changes (OpenID Connect Core §2): write "alice-0001" here, or another username for another user',
    ])
    expect(out).toEqual([])
    expect(await createPgClientStore(authz.db).findById('web')).toBeUndefined()
  })

  it("still reports the file's own problems when the database cannot be opened", async () => {
    opened = 0
    const e = await seed(FILE, async () => {
      throw new Error('the embedded database is open in another authz process')
    })
    expect(opened).toBe(1)
    expect(e).toBeInstanceOf(SeedError)
    expect((e as SeedError).problems).toEqual([
      'clients[0].enabled: Invalid input: expected boolean, received string',
      'clients[0].redirectUris[0]: client web: scheme "localhost:" is not allowed: use https, http only for localhost, 127.0.0.1 or [::1], or a native app\'s private-use scheme named after a domain it controls, such as com.example.app:/callback (RFC 8252 §7)',
      'users[0]: Unrecognized key: "pasword"',
      'clients[1].clientId: duplicate client "web"',
    ])
    // A valid file needs the database: its error is the database's.
    await expect(
      seed({ clients: [{ clientId: 'ok' }] }, async () => {
        throw new Error('cannot open')
      }),
    ).resolves.toMatchObject({ message: 'cannot open' })
  })

  it('applies a valid file', async () => {
    const file = await seed({
      clients: [
        {
          clientId: 'web',
          allowedGrantTypes: ['authorization_code'],
          allowedScopes: ['openid'],
          redirectUris: ['http://localhost:3000/cb'],
        },
      ],
    })
    expect(out).toEqual([
      `seed applied from ${String(file)}: 0 api scopes, 0 api resources, 0 identity resources, 1 clients, 0 users, 0 identity providers`,
    ])
    expect(await createPgClientStore(authz.db).findById('web')).toMatchObject({ redirectUris: ['http://localhost:3000/cb'] })
  })
})
