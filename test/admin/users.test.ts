// /admin/users: the seed file's user shape in and out, the password and CIBA user code write-only,
// the subject never changed, and the actions the CLI has: disable, enable, unlock, sign-out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../helpers/app.js'
import { createPgFailureCounterStore } from '../../src/stores/failure-counters.postgres.js'
import { createPgFederatedIdentityStore } from '../../src/stores/federated-identities.postgres.js'
import { postFormBasic } from '../helpers/http.js'
import { admin, adminAudit, adminToken, createAdminTestApp, PROBLEM } from './admin-fixtures.js'

let t: TestApp
let call: ReturnType<typeof admin>
beforeAll(async () => {
  t = await createAdminTestApp()
  await t.db.query(`UPDATE clients SET allowed_grant_types = '{password}' WHERE client_id = 'backend'`)
  call = admin(t, await adminToken(t))
})
afterAll(async () => t.close())

const passwordGrant = (username: string, password: string) =>
  postFormBasic(t.app, '/connect/token', { grant_type: 'password', username, password, scope: 'orders.read' }, 'backend', 'backend-secret')

describe('admin API: users', () => {
  it('answers a user without password or user code, with an ETag; 404 for none', async () => {
    const res = await call('GET', '/admin/users/alice')
    expect(res.statusCode).toBe(200)
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/)
    expect(res.json()).toEqual({
      subjectId: 'alice-1',
      username: 'alice',
      enabled: true,
      claims: { email: 'alice@example.com' },
      requireMfa: false,
    })
    const none = await call('GET', '/admin/users/nobody')
    expect(none.statusCode).toBe(404)
    expect(none.json()).toEqual({ type: 'about:blank', title: 'Not Found', status: 404, detail: 'no such user' })
  })

  it("lists a user's links to identity providers, oldest first, to a reader; 404 for no user", async () => {
    expect((await call('GET', '/admin/users/alice/links')).json()).toEqual({ items: [] })
    const links = createPgFederatedIdentityStore(t.db)
    await links.link('alice-1', { scheme: 'corp', upstreamSub: 'u-42', at: Date.UTC(2026, 0, 2) })
    await links.link('alice-1', { scheme: 'partner', upstreamSub: 'p-7', at: Date.UTC(2026, 0, 3) })
    const res = await call('GET', '/admin/users/alice/links')
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({
      items: [
        { scheme: 'corp', upstreamSub: 'u-42', linkedAt: '2026-01-02T00:00:00.000Z', lastSignInAt: '2026-01-02T00:00:00.000Z' },
        { scheme: 'partner', upstreamSub: 'p-7', linkedAt: '2026-01-03T00:00:00.000Z', lastSignInAt: '2026-01-03T00:00:00.000Z' },
      ],
    })
    expect((await call('GET', '/admin/users/nobody/links')).statusCode).toBe(404)
  })

  it('creates a user with PUT, making a subject when none is given; the password works and is never answered', async () => {
    const res = await call('PUT', '/admin/users/bob', { body: { password: 'bob-pw', claims: { name: 'Bob' } } })
    expect(res.statusCode).toBe(201)
    expect(res.headers.location).toBe('/admin/users/bob')
    const bob = res.json()
    expect(bob).toEqual({
      subjectId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      username: 'bob',
      enabled: true,
      claims: { name: 'Bob' },
      requireMfa: false,
    })
    expect((await passwordGrant('bob', 'bob-pw')).statusCode).toBe(200)
    expect(adminAudit(t).at(-1)).toMatchObject({ resource: 'users/bob', action: 'create' })
    expect(JSON.stringify(adminAudit(t))).not.toContain('bob-pw')
    // A new password: the ETag moves though the answer does not, and the change is recorded by name.
    const again = await call('PUT', '/admin/users/bob', {
      body: { password: 'bob-pw-2', claims: { name: 'Bob' } },
      headers: { 'if-match': res.headers.etag as string },
    })
    expect(again.statusCode).toBe(200)
    expect(again.json()).toEqual(bob)
    expect(again.headers.etag).not.toBe(res.headers.etag)
    expect(adminAudit(t).at(-1)).toMatchObject({ resource: 'users/bob', action: 'replace', changes: ['password'] })
    expect((await passwordGrant('bob', 'bob-pw')).statusCode).toBe(400)
  })

  it('refuses another subject for an existing username, with its path, and changes nothing', async () => {
    const res = await call('PUT', '/admin/users/alice', { body: { subjectId: 'alice-2' } })
    expect(res.statusCode).toBe(400)
    expect(res.headers).toMatchObject(PROBLEM)
    expect(res.json().errors).toEqual([
      {
        path: 'subjectId',
        detail:
          'user "alice" has subject "alice-1", and a subject never changes (OpenID Connect Core §2): write "alice-1" here, or another username for another user',
      },
    ])
    const { rows } = await t.db.query(`SELECT subject_id FROM users WHERE username = 'alice'`)
    expect(rows).toEqual([{ subject_id: 'alice-1' }])
  })

  it('refuses an invalid user with the path of each problem', async () => {
    const res = await call('PUT', '/admin/users/carol', { body: { enabled: 'yes', claims: [] } })
    expect(res.statusCode).toBe(400)
    expect(res.json().errors).toEqual([
      { path: 'enabled', detail: 'Invalid input: expected boolean, received string' },
      { path: 'claims', detail: 'Invalid input: expected record, received array' },
    ])
  })

  it('disables a user (their grants refused), enables them again; a stale If-Match changes nothing', async () => {
    const stale = await call('POST', '/admin/users/alice/disable', { headers: { 'if-match': '"stale"' } })
    expect(stale.statusCode).toBe(412)
    const res = await call('POST', '/admin/users/alice/disable')
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({
      subjectId: 'alice-1',
      username: 'alice',
      enabled: false,
      claims: { email: 'alice@example.com' },
      requireMfa: false,
      sessionsEnded: 0,
    })
    expect((await passwordGrant('alice', 'alice-pw')).statusCode).toBe(400)
    expect(adminAudit(t).at(-1)).toMatchObject({
      client_id: 'automation',
      resource: 'users/alice',
      action: 'disable',
      changes: ['enabled'],
    })
    const enabled = await call('POST', '/admin/users/alice/enable')
    expect(enabled.json().enabled).toBe(true)
    expect((await passwordGrant('alice', 'alice-pw')).statusCode).toBe(200)
  })

  it('lists the lockouts in force by subject, and none once unlocked', async () => {
    const failures = createPgFailureCounterStore(t.db)
    const now = t.clock.now()
    await failures.recordFailure({ kind: 'user', name: 'alice-1', source: '' }, { limit: 1, baseSeconds: 60, maxSeconds: 60 }, now)
    expect((await call('GET', '/admin/lockouts')).json()).toEqual({
      items: [{ subjectId: 'alice-1', lockedUntil: new Date(now + 60_000).toISOString() }],
    })
    expect((await call('POST', '/admin/users/alice/unlock')).statusCode).toBe(200)
    expect((await call('GET', '/admin/lockouts')).json()).toEqual({ items: [] })
  })

  it('lists the lockouts a page at a time, by subject, and refuses a bad limit or cursor', async () => {
    const failures = createPgFailureCounterStore(t.db)
    const now = t.clock.now()
    for (const name of ['s-c', 's-a', 's-b']) {
      await failures.recordFailure({ kind: 'user', name, source: '' }, { limit: 1, baseSeconds: 60, maxSeconds: 60 }, now)
    }
    const until = new Date(now + 60_000).toISOString()
    const first = (await call('GET', '/admin/lockouts?limit=2')).json()
    expect(first).toEqual({
      items: [
        { subjectId: 's-a', lockedUntil: until },
        { subjectId: 's-b', lockedUntil: until },
      ],
      nextCursor: expect.any(String),
    })
    expect((await call('GET', `/admin/lockouts?limit=2&cursor=${first.nextCursor}`)).json()).toEqual({
      items: [{ subjectId: 's-c', lockedUntil: until }],
    })
    const bad = await call('GET', '/admin/lockouts?limit=0&enabled=true')
    expect(bad.statusCode).toBe(400)
    expect(bad.json().errors).toEqual([
      { path: 'limit', detail: 'Too small: expected number to be >=1' },
      { path: '(root)', detail: 'Unrecognized key: "enabled"' },
    ])
    expect((await call('GET', '/admin/lockouts?cursor=nope!')).statusCode).toBe(400)
    await t.db.query(`DELETE FROM failure_counters WHERE name IN ('s-a', 's-b', 's-c')`)
  })

  it('unlocks a user and signs them out everywhere, answering what was done', async () => {
    for (let i = 0; i < 2; i++) expect((await passwordGrant('alice', 'wrong')).statusCode).toBe(400)
    const unlocked = await call('POST', '/admin/users/alice/unlock')
    expect(unlocked.statusCode).toBe(200)
    expect(unlocked.json()).toMatchObject({ username: 'alice', failuresCleared: 1 })
    const signedOut = await call('POST', '/admin/users/alice/sign-out')
    expect(signedOut.json()).toMatchObject({ username: 'alice', sessionsEnded: 0 })
    expect((await call('POST', '/admin/users/nobody/unlock')).statusCode).toBe(404)
  })

  it('lists users by username, filters by enabled, and deletes one', async () => {
    const list = (await call('GET', '/admin/users?limit=1')).json()
    expect(list.items).toEqual([
      { subjectId: 'alice-1', username: 'alice', enabled: true, claims: { email: 'alice@example.com' }, requireMfa: false },
    ])
    const rest = (await call('GET', `/admin/users?cursor=${list.nextCursor}`)).json()
    expect(rest.items.map((u: { username: string }) => u.username)).toEqual(['bob'])
    expect((await call('GET', '/admin/users?enabled=false')).json()).toEqual({ items: [] })
    expect((await call('DELETE', '/admin/users/bob')).statusCode).toBe(204)
    expect((await call('GET', '/admin/users/bob')).statusCode).toBe(404)
    expect(adminAudit(t).at(-1)).toMatchObject({ resource: 'users/bob', action: 'delete' })
  })
})
