// Start-up as an operator meets it: a database it cannot reach, a seed file with a typo, and the
// demo seed of a fresh clone, which must not undo what the operator changes with the CLI.
import { spawnSync } from 'node:child_process'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { MAIN } from '../helpers/built.js'
import { createEmptyTestDb, createTestDataDir, usingServer, type TestDb } from '../helpers/db.js'
import { freePort } from '../helpers/free-port.js'
import { startServer, waitForOutput, type ServerProcess } from '../helpers/server-process.js'
import { runCli } from '../cli/run-cli.js'
import { nodeEndOfLifeWarning } from '../../src/domain/node-support.js'

const SLOW = 120_000
const dirs: string[] = []
let server: ServerProcess | undefined
let testDb: TestDb | undefined
afterEach(async () => {
  await server?.stop()
  await testDb?.close()
  server = testDb = undefined
})
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

async function tempDir() {
  const d = await mkdtemp(join(tmpdir(), 'authz-startup-'))
  dirs.push(d)
  return d
}

function runMain(env: Record<string, string>) {
  return spawnSync(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  })
}

async function token(baseUrl: string, id: string, secret: string) {
  const res = await fetch(`${baseUrl}/connect/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  })
  return res.status
}

describe('start-up', { timeout: SLOW }, () => {
  it('names DATABASE_URL, without its password, when the database cannot be reached', async () => {
    const port = await freePort() // nothing listens there
    const res = runMain({ DATABASE_URL: `postgres://authz:pa55word@127.0.0.1:${port}/authz` })
    expect(res.status).toBe(1)
    const lines = res.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(
      new RegExp(
        `^authz failed to start: cannot connect to the database at DATABASE_URL \\(postgres://authz:\\*\\*\\*@127\\.0\\.0\\.1:${port}/authz\\): \\S`,
      ),
    )
    expect(res.stderr + res.stdout).not.toContain('pa55word')
  })

  it('refuses a primary colour too light for white button text, before touching any database', () => {
    const res = runMain({ BRAND_PRIMARY_COLOR: '#ffcc00', DATA_DIR: '/nonexistent/authz-data' })
    expect(res.status).toBe(1)
    expect(res.stderr).toBe(
      'config error: BRAND_PRIMARY_COLOR must have a contrast of at least 4.5:1 against white (WCAG 2.x: buttons carry white text on it, links are set in it on white), got "#ffcc00" with 1.51:1; choose a darker shade\n',
    )
  })

  it('checks SEED_FILE before migrating anything: an invalid file leaves the database untouched', async () => {
    const dir = await tempDir()
    const seedFile = join(dir, 'seed.json')
    await writeFile(seedFile, JSON.stringify({ clients: [{ clientId: 'x', allowedGrantTypes: ['client_credentials'], secrtes: [] }] }))
    let env: Record<string, string>
    if (usingServer()) {
      testDb = await createEmptyTestDb()
      env = testDb.env
    } else {
      env = { DATA_DIR: join(dir, 'data') }
    }
    const res = runMain({ ...env, SEED_FILE: seedFile })
    expect(res.status).toBe(1)
    expect(res.stderr).toContain(`authz failed to start: invalid seed file ${seedFile}:`)
    expect(res.stderr).toMatch(/clients\[0\]: Unrecognized key: "secrtes"/)
    if (testDb) {
      const { rows } = await testDb.db.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`)
      expect(rows[0]!.t).toBeNull()
    } else {
      await expect(readdir(join(dir, 'data'))).rejects.toMatchObject({ code: 'ENOENT' })
    }
  })

  it('applies the demo seed to a fresh database only, so a secret added with the CLI survives the next start', async () => {
    const dir = await tempDir()
    const dataDir = join(dir, 'data')
    let env: Record<string, string> = {}
    if (usingServer()) {
      testDb = await createEmptyTestDb()
      env = { ...testDb.env, DEMO_SEED: 'true' }
    }
    // First start: the schema is created and the demo seed applied.
    server = await startServer(env, MAIN, usingServer() ? {} : { dataDir: await createTestDataDir(dataDir, { empty: true }) })
    expect(server.output()).toMatch(/"reason":"the demo seed is applied once, to the database this start created".*"msg":"seed applied"/)
    // A Node.js past its end of life is said once, at start (src/domain/node-support.ts).
    const endOfLife = nodeEndOfLifeWarning(process.version, new Date())
    if (endOfLife) expect(server.output().split(`"msg":${JSON.stringify(endOfLife)}`)).toHaveLength(2)
    else expect(server.output()).not.toContain('end of life')
    // JSON logs (no terminal) get no banner: the demo's password stays out of log collectors.
    await waitForOutput(server, '"msg":"authz is ready, with the demo seed: its credentials are in the README (Demo credentials)"')
    expect(server.output()).not.toContain('alice-password')
    expect(server.output()).toContain(
      usingServer()
        ? '"msg":"KEY_ENCRYPTION_SECRET is not set: signing keys are stored unencrypted in the database"'
        : '"msg":"KEY_ENCRYPTION_SECRET is not set: signing keys are stored unencrypted in DATA_DIR"',
    )
    expect(await token(server.baseUrl, 'demo-backend', 'demo-backend-secret')).toBe(200)
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)

    // The README's example, then a second start.
    const added = await runCli(['clients', 'add-secret', 'demo-backend'], { env: usingServer() ? testDb!.env : { DATA_DIR: dataDir } })
    expect(added.code).toBe(0)
    const secret = added.stdout.trim()
    // ...this time with KEY_ENCRYPTION_SECRET: the keys and secrets stored unencrypted are replaced;
    // and as a developer at a terminal reads it (LOG_FORMAT=pretty).
    server = await startServer(
      { ...env, KEY_ENCRYPTION_SECRET: 'a-key-encryption-secret-for-tests', LOG_FORMAT: 'pretty' },
      MAIN,
      usingServer() ? {} : { dataDir },
    )
    await waitForOutput(server, 'Every flow')
    expect(server.output()).not.toContain('seed applied')
    // The restart says it skipped the demo seed, why, and how to apply it again.
    expect(server.output()).toMatch(
      /^\d\d:\d\d:\d\d INFO: demo seed skipped: it was applied when this database was created, and is not applied again so that changes made since are kept\. To apply seed\/demo\.json again, start with SEED_FILE=seed\/demo\.json \(applied at every start\), or run `npx authz seed seed\/demo\.json` while the server is stopped$/m,
    )
    expect(server.output()).toContain(
      'WARN: signing keys stored in plaintext are replaced by new keys encrypted with KEY_ENCRYPTION_SECRET; copies of the data made before still hold the old keys',
    )
    expect(server.output()).toContain(
      'WARN (csrf): server secret stored in plaintext replaced by a new one encrypted with KEY_ENCRYPTION_SECRET name=csrf purged=true',
    )
    // The banner: where to go, whom to sign in as, the first request (the issuer is http://localhost:$PORT).
    expect(server.output()).toContain(
      [
        'INFO: authz is ready, with the demo seed',
        '    Open         http://localhost:0/',
        '    Sign in as   alice / alice-password',
        '    First token  curl -s -u demo-backend:demo-backend-secret -d grant_type=client_credentials http://localhost:0/connect/token',
        '    Every flow   docs/flows.md; these credentials are public: keep this server on your machine',
      ].join('\n'),
    )
    expect(server.output()).not.toMatch(/^\{/m)
    expect(server.output()).not.toContain('KEY_ENCRYPTION_SECRET is not set')
    expect(await token(server.baseUrl, 'demo-backend', secret)).toBe(200)
    expect(await token(server.baseUrl, 'demo-backend', 'demo-backend-secret')).toBe(200)
  })
})
