// authz clients list tells a client someone registered for themselves (RFC 7591) from the
// operator's own, and prints the same whether it reads the database itself or, while a server
// holds the embedded database, goes through the admin API that server serves to its CLI.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AdminApi } from '../../src/cli/admin-api.js'
import { clientsCommand } from '../../src/cli/clients.js'
import type { CliContext } from '../../src/cli/context.js'
import { systemClock } from '../../src/domain/clock.js'
import type { TestApp } from '../helpers/app.js'
import { admin, adminToken, createAdminTestApp } from '../admin/admin-fixtures.js'

let authz: TestApp
let registered: string

beforeAll(async () => {
  authz = await createAdminTestApp({ REGISTRATION: 'open' })
  const res = await authz.app.inject({
    method: 'POST',
    url: '/connect/register',
    headers: { 'content-type': 'application/json' },
    payload: {
      client_name: 'Assistant',
      redirect_uris: ['http://127.0.0.1:33418/callback'],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: 'none',
      scope: 'openid',
    },
  })
  expect(res.statusCode, res.body).toBe(201)
  registered = res.json().client_id as string
})
afterAll(async () => authz.close())

/** The lines `authz clients ARGS` prints: on the database itself, or through the admin API when `api` is given. */
async function run(args: string[], api?: AdminApi): Promise<string[]> {
  const out: string[] = []
  const ctx: CliContext = {
    out: (l) => void out.push(l),
    err: () => {},
    stdin: process.stdin,
    clock: systemClock,
    config: () => {
      throw new Error('not needed')
    },
    db: async () => authz.db,
    ...(api ? { server: async () => api } : {}),
  }
  await clientsCommand.run(args, ctx)
  return out
}

/** The admin API as the CLI calls it, answered by the test app's admin listener. */
async function adminApi(): Promise<AdminApi> {
  const call = admin(authz, await adminToken(authz))
  return {
    async call(method, path, opts = {}) {
      const res = await call(method, path, {
        ...(opts.body === undefined ? {} : { body: opts.body }),
        headers: {
          ...(opts.ifMatch ? { 'if-match': opts.ifMatch } : {}),
          ...(opts.ifNoneMatch ? { 'if-none-match': opts.ifNoneMatch } : {}),
        },
      })
      const etag = res.headers.etag
      return { status: res.statusCode, body: res.body === '' ? undefined : res.json(), etag: typeof etag === 'string' ? etag : undefined }
    },
  }
}

describe('authz clients list', () => {
  it('marks a self-registered client, the same on the database and through the server', async () => {
    const direct = await run(['list'])
    expect(direct[0]).toMatch(/^CLIENT ID +ENABLED +SELF-REGISTERED +SECRETS +GRANT TYPES +SCOPES$/)
    const rows = new Map(direct.slice(1).map((l) => [l.split(/ +/)[0], l.split(/ +/).slice(1, 3)]))
    expect(Object.fromEntries(rows)).toEqual({
      auditor: ['yes', 'no'],
      automation: ['yes', 'no'],
      backend: ['yes', 'no'],
      [registered]: ['yes', 'yes'],
    })
    expect(await run(['list'], await adminApi())).toEqual(direct)
  })

  it('says selfRegistered in --json, the same on the database and through the server', async () => {
    const direct = JSON.parse((await run(['list', '--json'])).join('\n')) as Array<Record<string, unknown>>
    expect(Object.fromEntries(direct.map((c) => [c.clientId, c.selfRegistered]))).toEqual({
      auditor: null,
      automation: null,
      backend: null,
      [registered]: 'registration',
    })
    expect(JSON.parse((await run(['list', '--json'], await adminApi())).join('\n'))).toEqual(direct)
  })
})
