// authz users remove, run in process against the app's database: what was issued to or decided for
// the subject goes with the user. A user re-created with the same subject id (OIDC Core §2 says a
// subject is never reassigned; an operator may do it anyway) must not inherit the old refresh token
// (invalid_grant, RFC 6749 §5.2), reference token ({"active":false}, RFC 7662 §2.2) or consent.
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createContext } from '../../src/cli/context.js'
import { usersCommand } from '../../src/cli/users.js'
import { applySeed } from '../../src/seed/apply.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { postFormBasic } from '../helpers/http.js'

let authz: TestApp
beforeAll(async () => {
  authz = await createTestApp()
  await applySeed(authz.db, {
    apiScopes: [{ name: 'orders.read' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read'], secrets: [{ value: 'orders-secret' }] }],
    identityResources: ['openid', 'offline_access'],
    clients: [
      {
        clientId: 'web',
        secrets: [{ value: 'web-secret' }],
        allowedGrantTypes: ['password'],
        accessTokenType: 'reference',
        allowedScopes: ['openid', 'orders.read', 'offline_access'],
        allowOfflineAccess: true,
      },
    ],
    users: [{ subjectId: 'sub-hana', username: 'hana', password: 'hana-pw', claims: {} }],
  })
})
afterAll(() => authz?.close())

async function cli(args: string[], stdin = '') {
  const input = new PassThrough()
  input.end(stdin)
  const out: string[] = []
  await usersCommand.run(
    args,
    createContext({ out: (l) => out.push(l), err: () => {}, stdin: input, clock: authz.clock }, {}, { db: authz.db }),
  )
  return out
}
describe('authz users remove', () => {
  it("deletes the subject's tokens and consents, so a re-created subject does not inherit them", async () => {
    const res = await postFormBasic(
      authz.app,
      '/connect/token',
      { grant_type: 'password', username: 'hana', password: 'hana-pw', scope: 'openid orders.read offline_access' },
      'web',
      'web-secret',
    )
    expect(res.statusCode).toBe(200)
    const { access_token: accessToken, refresh_token: refreshToken } = res.json()
    await authz.db.query(
      `INSERT INTO consents (subject_id, client_id, scopes, created_at, updated_at) VALUES ('sub-hana', 'web', '{openid}', now(), now())`,
    )
    expect(
      (await postFormBasic(authz.app, '/connect/introspect', { token: accessToken }, 'orders-api', 'orders-secret')).json(),
    ).toMatchObject({ active: true })

    expect(await cli(['remove', 'hana'])).toEqual(['removed user "hana" (subject sub-hana)'])
    expect(await cli(['add', 'hana', '--subject', 'sub-hana'], 'hana-pw2\n')).toEqual(['created user "hana" (subject sub-hana)'])

    const refreshed = await postFormBasic(
      authz.app,
      '/connect/token',
      { grant_type: 'refresh_token', refresh_token: refreshToken },
      'web',
      'web-secret',
    )
    expect(refreshed.statusCode).toBe(400)
    expect(refreshed.json()).toMatchObject({ error: 'invalid_grant' })
    const introspected = await postFormBasic(authz.app, '/connect/introspect', { token: accessToken }, 'orders-api', 'orders-secret')
    expect(introspected.statusCode).toBe(200)
    expect(introspected.json()).toEqual({ active: false })
    const { rows } = await authz.db.query(
      `SELECT 1 FROM consents WHERE subject_id = 'sub-hana' UNION ALL SELECT 1 FROM persisted_grants WHERE subject_id = 'sub-hana'`,
    )
    expect(rows).toHaveLength(0)
  })
})
