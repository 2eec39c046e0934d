// authz ciba list | approve | deny, run in-process against a test database (the CLI's process
// plumbing is covered by test/cli).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cibaCommand } from '../../../src/cli/ciba.js'
import { CliError, UsageError, type CliContext } from '../../../src/cli/context.js'
import { createManualClock } from '../../../src/domain/clock.js'
import { applySeed } from '../../../src/seed/apply.js'
import { createPgCibaRequestStore } from '../../../src/stores/ciba-requests.postgres.js'
import type { NewCibaRequest } from '../../../src/stores/ciba-requests.js'
import { createTestDb, type TestDb } from '../../helpers/db.js'

let authz: TestDb
const T0 = Date.UTC(2026, 2, 1, 12)
const clock = createManualClock(T0)
let out: string[] = []
const ctx = (): CliContext => ({
  out: (l) => void out.push(l),
  err: () => {},
  stdin: process.stdin,
  clock,
  config: () => {
    throw new Error('not needed')
  },
  db: async () => authz.db,
})
const run = async (...args: string[]) => {
  out = []
  await cibaCommand.run(args, ctx())
  return out
}

function req(id: string, over: Partial<NewCibaRequest> = {}): NewCibaRequest {
  return {
    id,
    authReqId: `a-${id}`,
    clientId: 'bank',
    subjectId: 'u-alice',
    requestedScopes: ['openid', 'email'],
    resources: [],
    acrValues: [],
    tenant: undefined,
    idp: undefined,
    bindingMessage: 'K9',
    intervalSeconds: 5,
    familyId: `f-${id}`,
    createdAt: T0,
    expiresAt: T0 + 60_000,
    ...over,
  }
}

beforeAll(async () => {
  authz = await createTestDb()
  await applySeed(authz.db, { users: [{ subjectId: 'u-alice', username: 'alice' }] })
  const store = createPgCibaRequestStore(authz.db)
  await store.create(req('r1'))
  await store.create(req('r2', { createdAt: T0 + 1, bindingMessage: undefined }))
  await store.create(req('old', { expiresAt: T0 - 1 }))
})
afterAll(() => authz.close())

describe('authz ciba', () => {
  it('lists pending, unexpired requests with the username asked, as a table and as JSON lines', async () => {
    expect(await run('list')).toEqual([
      'REQUEST_ID  CLIENT  USER   SUBJECT  EXPIRES                   SCOPES        BINDING_MESSAGE',
      'r1          bank    alice  u-alice  2026-03-01T12:01:00.000Z  openid email  K9',
      'r2          bank    alice  u-alice  2026-03-01T12:01:00.000Z  openid email  ',
    ])
    expect((await run('list', '--json')).map((l) => JSON.parse(l))[0]).toEqual({
      request_id: 'r1',
      client_id: 'bank',
      subject: 'u-alice',
      username: 'alice',
      scopes: ['openid', 'email'],
      binding_message: 'K9',
      created_at: '2026-03-01T12:00:00.000Z',
      expires_at: '2026-03-01T12:01:00.000Z',
    })
  })

  it('approves and denies pending requests, once', async () => {
    clock.advance(5)
    expect(await run('approve', 'r1')).toEqual(['approved request "r1" (client bank, subject u-alice)'])
    const r1 = await createPgCibaRequestStore(authz.db).findById('r1')
    expect(r1).toMatchObject({ status: 'approved', approvedScopes: ['openid', 'email'], authTime: T0 + 5000 })
    expect(await run('deny', 'r2')).toEqual(['denied request "r2" (client bank, subject u-alice)'])
    await expect(run('deny', 'r1')).rejects.toThrow(new CliError('request "r1" was already approved'))
    await expect(run('approve', 'old')).rejects.toThrow(new CliError('request "old" has expired'))
    await expect(run('approve', 'nope')).rejects.toThrow(new CliError('no CIBA request "nope"'))
    expect(await run('list')).toEqual(['no pending CIBA requests'])
  })

  it('reports usage errors', async () => {
    await expect(run()).rejects.toBeInstanceOf(UsageError)
    await expect(run('approve')).rejects.toThrow('expected exactly one REQUEST_ID')
    await expect(run('frob')).rejects.toThrow('unknown subcommand "frob"')
  })
})
