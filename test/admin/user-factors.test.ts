// /admin/users/{username}/factors and …/reset-factors: a person's second factors as `authz users
// factors` shows them (never the secret), and their removal for a lost device, which ends the
// user's sessions and is audited, as `authz users reset-factors` does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPgUserFactorStore } from '../../src/stores/user-factors.postgres.js'
import type { TestApp } from '../helpers/app.js'
import { signInWithForm } from '../helpers/sign-in.js'
import { admin, adminAudit, adminToken, createAdminTestApp, PROBLEM, readToken } from './admin-fixtures.js'

const SECRET = 'JBSWY3DPEHPK3PXP'

let t: TestApp
let call: ReturnType<typeof admin>
let read: ReturnType<typeof admin>
beforeAll(async () => {
  t = await createAdminTestApp()
  call = admin(t, await adminToken(t))
  read = admin(t, await readToken(t))
})
afterAll(async () => t.close())

const account = (cookie: string) => t.app.inject({ method: 'GET', url: '/account', headers: { cookie } })

describe('admin API: second factors', () => {
  let cookie: string
  let setUpAt: number

  it('answers a user without a second factor as having none', async () => {
    const res = await read('GET', '/admin/users/alice/factors')
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.json()).toEqual({ recoveryCodesLeft: 0, passkeys: [] })
  })

  it('answers when the factor was set up and last used, and how many recovery codes are left, never the secret', async () => {
    ;({ cookie } = await signInWithForm(t.app, { returnTo: '/account' }, 'alice', 'alice-pw'))
    expect((await account(cookie)).statusCode).toBe(200)
    const factors = createPgUserFactorStore(t.db)
    setUpAt = t.clock.now()
    await factors.setPending('alice-1', SECRET, setUpAt)
    expect(await factors.confirm('alice-1', SECRET, 1000, ['h1', 'h2', 'h3'], setUpAt)).toBe(true)
    expect(await factors.useRecoveryCode('alice-1', 'h2', t.clock.now())).toBe(true)

    const res = await read('GET', '/admin/users/alice/factors')
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({
      totp: { setUpAt: new Date(setUpAt).toISOString(), lastUsedAt: new Date(setUpAt).toISOString() },
      recoveryCodesLeft: 2,
      passkeys: [],
    })
    expect(res.body).not.toContain(SECRET)
  })

  it('lists passkeys too, by name, when added and last used, never their keys', async () => {
    const added = t.clock.now()
    for (const [id, name, lastUsedAt] of [
      ['cred-2', 'Laptop', undefined],
      ['cred-1', 'Phone', added + 60_000],
    ] as const) {
      await t.db.query(
        `INSERT INTO passkeys (credential_id, subject_id, public_key, counter, transports, backup_eligible, backed_up, aaguid, name, created_at, last_used_at)
         VALUES ($1, 'alice-1', '\\x0102', 0, '{}', false, false, '00000000-0000-0000-0000-000000000000', $2, $3, $4)`,
        [id, name, new Date(id === 'cred-1' ? added - 1000 : added), lastUsedAt === undefined ? null : new Date(lastUsedAt)],
      )
    }
    const res = await read('GET', '/admin/users/alice/factors')
    expect(res.json()).toEqual({
      totp: { setUpAt: new Date(setUpAt).toISOString(), lastUsedAt: new Date(setUpAt).toISOString() },
      recoveryCodesLeft: 2,
      passkeys: [
        { name: 'Phone', setUpAt: new Date(added - 1000).toISOString(), lastUsedAt: new Date(added + 60_000).toISOString() },
        { name: 'Laptop', setUpAt: new Date(added).toISOString() },
      ],
    })
    expect(res.body).not.toContain('cred-')
  })

  it('removes them and ends the sessions: the person is signed out, and it is audited', async () => {
    const res = await call('POST', '/admin/users/alice/reset-factors')
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ subjectId: 'alice-1', removed: true, sessionsEnded: 1 })
    expect((await read('GET', '/admin/users/alice/factors')).json()).toEqual({ recoveryCodesLeft: 0, passkeys: [] })
    expect(await createPgUserFactorStore(t.db).hasFactor('alice-1')).toBe(false)
    const after = await account(cookie)
    expect(after.statusCode).toBe(303)
    expect(after.headers.location).toMatch(/^\/account\/sign-in\?/)

    const audit = t.logs.map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(audit.find((l) => l.event === 'factor.removed')).toMatchObject({ username: 'alice', reason: 'admin' })
    expect(adminAudit(t).at(-1)).toMatchObject({ client_id: 'automation', resource: 'users/alice', action: 'reset-factors' })

    expect((await call('POST', '/admin/users/alice/reset-factors')).json()).toEqual({
      subjectId: 'alice-1',
      removed: false,
      sessionsEnded: 0,
    })
  })

  it('answers 404 for a user that is not there', async () => {
    for (const [method, path] of [
      ['GET', '/admin/users/nobody/factors'],
      ['POST', '/admin/users/nobody/reset-factors'],
    ] as const) {
      const res = await call(method, path)
      expect(res.statusCode).toBe(404)
      expect(res.headers).toMatchObject(PROBLEM)
      expect(res.json().detail).toBe('no such user')
    }
  })

  it('removes a passkey too (a second factor where passkeys are offered), for a person who has no codes', async () => {
    await t.db.query(
      `INSERT INTO passkeys (credential_id, subject_id, public_key, counter, transports, backup_eligible, backed_up, aaguid, name, created_at)
       VALUES ('cred-1', 'alice-1', '\\x00', 0, '{}', false, false, '00000000-0000-0000-0000-000000000000', 'Lost phone', $1)`,
      [new Date(t.clock.now())],
    )
    const res = await call('POST', '/admin/users/alice/reset-factors')
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ subjectId: 'alice-1', removed: true, sessionsEnded: 0 })
    expect((await t.db.query(`SELECT 1 FROM passkeys WHERE subject_id = 'alice-1'`)).rows).toEqual([])
    expect(t.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === 'factor.removed')).toHaveLength(2)
  })

  it('needs a token to read, and authz:admin to reset', async () => {
    expect((await admin(t, undefined)('GET', '/admin/users/alice/factors')).statusCode).toBe(401)
    const refused = await read('POST', '/admin/users/alice/reset-factors')
    expect(refused.statusCode).toBe(403)
    expect(refused.headers['www-authenticate']).toContain('error="insufficient_scope", scope="authz:admin"')
  })
})
