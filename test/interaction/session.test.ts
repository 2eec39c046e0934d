// The one sign-in session: stored hashed, idle and absolute lifetimes on the injected clock, a
// new handle at every sign-in (the old one dead), a disabled user's session dead, clients
// recorded for logout, and a seed file that would give the person another subject id refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createManualClock } from '../../src/domain/clock.js'
import { createSessionService, sessionSatisfies, type SessionService } from '../../src/interaction/session.js'
import { applySeed } from '../../src/seed/apply.js'
import { handleHash } from '../../src/stores/columns.postgres.js'
import { createPgUserSessionStore } from '../../src/stores/user-sessions.postgres.js'
import type { Queryable } from '../../src/db/db.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

const T0 = Date.UTC(2026, 0, 1)
const IDLE = 600
const LIFETIME = 3600
const clock = createManualClock(T0)
let authz: TestDb
let sessions: SessionService
const alice = { subjectId: 'alice-1', username: 'alice', amr: ['pwd'] }

beforeAll(async () => {
  authz = await createTestDb()
  await applySeed(authz.db, {
    users: [
      { subjectId: 'alice-1', username: 'alice' },
      { subjectId: 'bob-1', username: 'bob' },
    ],
  })
  sessions = createSessionService({ clock, store: createPgUserSessionStore(authz.db), idleSeconds: IDLE, lifetimeSeconds: LIFETIME })
})
afterAll(() => authz.close())

describe('session service', () => {
  it('stores only the hash of a fresh 256-bit handle, with user, auth_time, amr and both deadlines', async () => {
    clock.set(T0)
    const { handle, session } = await sessions.start(undefined, alice)
    expect(handle).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(session).toEqual({
      sid: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      subjectId: 'alice-1',
      username: 'alice',
      authTime: T0,
      amr: ['pwd'],
      clientIds: [],
      expiresAt: T0 + IDLE * 1000,
      endsAt: T0 + LIFETIME * 1000,
      lastUsedAt: T0,
    })
    const { rows } = await authz.db.query('SELECT id_hash, sid FROM user_sessions WHERE subject_id = $1', ['alice-1'])
    expect(rows).toEqual([{ id_hash: handleHash(handle), sid: session.sid }])
    expect(await sessions.use(handle)).toEqual(session)
    expect(await sessions.use('not-a-handle')).toBeUndefined()
    expect(await sessions.use(undefined)).toBeUndefined()
  })

  it('ends after SESSION_IDLE_TIMEOUT unused, and use moves the idle deadline', async () => {
    clock.set(T0)
    const { handle } = await sessions.start(undefined, alice)
    clock.advance(IDLE - 1)
    expect((await sessions.use(handle))?.expiresAt).toBe(clock.now() + IDLE * 1000) // moved forward
    clock.advance(IDLE - 1)
    expect(await sessions.use(handle)).toBeDefined()
    clock.advance(IDLE)
    expect(await sessions.use(handle)).toBeUndefined()
  })

  it('ends SESSION_LIFETIME after sign-in however often it is used; auth_time stays the sign-in time', async () => {
    clock.set(T0)
    const { handle } = await sessions.start(undefined, alice)
    let last
    for (let at = 0; at < LIFETIME; at += IDLE / 2) {
      clock.set(T0 + at * 1000)
      last = await sessions.use(handle)
      expect(last?.authTime).toBe(T0)
    }
    clock.set(T0 + (LIFETIME - 1) * 1000)
    expect((await sessions.use(handle))?.expiresAt).toBe(T0 + LIFETIME * 1000) // never past the end
    clock.set(T0 + LIFETIME * 1000)
    expect(await sessions.use(handle)).toBeUndefined()
  })

  it('replaces the handle at every sign-in: the previous one is dead', async () => {
    clock.set(T0)
    const first = await sessions.start(undefined, alice)
    const second = await sessions.start(first.handle, alice)
    expect(second.handle).not.toBe(first.handle)
    expect(second.session.sid).not.toBe(first.session.sid)
    expect(await sessions.use(first.handle)).toBeUndefined()
    expect(await sessions.use(second.handle)).toBeDefined()
  })

  it("a disabled user's session is dead at once", async () => {
    clock.set(T0)
    const { handle } = await sessions.start(undefined, { subjectId: 'bob-1', username: 'bob', amr: ['pwd'] })
    await authz.db.query(`UPDATE users SET enabled = false WHERE subject_id = 'bob-1'`)
    expect(await sessions.use(handle)).toBeUndefined()
    await authz.db.query(`UPDATE users SET enabled = true WHERE subject_id = 'bob-1'`)
  })

  it('records each client once and returns them when the session ends', async () => {
    clock.set(T0)
    const { handle, session } = await sessions.start(undefined, alice)
    await sessions.addClient(session, 'web')
    await sessions.addClient(session, 'spa')
    await sessions.addClient(session, 'web')
    expect((await sessions.use(handle))?.clientIds).toEqual(['web', 'spa'])
    expect((await sessions.end(handle))?.clientIds).toEqual(['web', 'spa'])
    expect(await sessions.use(handle)).toBeUndefined()
    expect(await sessions.end(handle)).toBeUndefined()
  })

  it('refuses a seed file that gives a signed-in person another subject id: the session stays theirs', async () => {
    // A subject never changes (OIDC Core §2): moved, the session would follow carol to a subject
    // the apps she signed in to do not know, and carol-1 would be free for someone else.
    clock.set(T0)
    await applySeed(authz.db, { users: [{ subjectId: 'carol-1', username: 'carol' }] })
    const { handle } = await sessions.start(undefined, { subjectId: 'carol-1', username: 'carol', amr: ['pwd'] })
    await expect(applySeed(authz.db, { users: [{ subjectId: 'carol-2', username: 'carol' }] })).rejects.toMatchObject({
      problems: [
        'users[0].subjectId: user "carol" has subject "carol-1", and a subject never changes (OpenID Connect Core §2): write "carol-1" here, or another username for another user',
      ],
    })
    expect((await sessions.use(handle))?.subjectId).toBe('carol-1')
  })

  it('removes sessions past either deadline in the cleanup', async () => {
    const store = createPgUserSessionStore(authz.db)
    await authz.db.query('DELETE FROM user_sessions')
    clock.set(T0)
    await sessions.start(undefined, alice)
    expect(await store.removeExpired(T0 + IDLE * 1000, 10)).toBe(0)
    expect(await store.removeExpired(T0 + IDLE * 1000 + 1, 10)).toBe(1)
  })
})

describe('sessionSatisfies (max_age, prompt=login)', () => {
  const s = {
    sid: 's',
    subjectId: 'a',
    username: 'a',
    authTime: T0,
    amr: ['pwd'],
    clientIds: [],
    expiresAt: T0 + 1,
    endsAt: T0 + 1,
    lastUsedAt: T0,
  }
  it('asks for a sign-in recent enough, and after a given moment', () => {
    expect(sessionSatisfies(undefined, {}, T0)).toBe(false)
    expect(sessionSatisfies(s, {}, T0 + 10_000_000)).toBe(true)
    expect(sessionSatisfies(s, { maxAge: 60 }, T0 + 60_999)).toBe(true)
    expect(sessionSatisfies(s, { maxAge: 60 }, T0 + 61_000)).toBe(false)
    expect(sessionSatisfies(s, { maxAge: 0 }, T0 + 999)).toBe(true)
    expect(sessionSatisfies(s, { maxAge: 0 }, T0 + 1000)).toBe(false)
    expect(sessionSatisfies(s, { signedInAfter: T0 }, T0)).toBe(true)
    expect(sessionSatisfies(s, { signedInAfter: T0 + 1 }, T0)).toBe(false)
  })
})

describe('ending a session when the wake-up notice fails', () => {
  it('still ends the session and queues its back-channel logouts (the workers poll for them)', async () => {
    await applySeed(authz.db, {
      clients: [{ clientId: 'notified', secrets: [{ value: 's' }], backChannelLogoutUri: 'https://app.example.com/bcl' }],
    })
    // The same database, except that NOTIFY fails (a connection lost right after the DELETE).
    const failingNotify: Queryable = {
      query: (sql, params, opts) =>
        sql.includes('pg_notify') ? Promise.reject(new Error('connection terminated')) : authz.db.query(sql, params, opts),
      exec: (sql) => authz.db.exec(sql),
    }
    const withFailingNotify = createSessionService({
      clock,
      store: createPgUserSessionStore(failingNotify),
      idleSeconds: IDLE,
      lifetimeSeconds: LIFETIME,
    })
    clock.set(T0)
    const { handle, session } = await withFailingNotify.start(undefined, alice)
    await withFailingNotify.addClient(session, 'notified')
    expect((await withFailingNotify.end(handle))?.sid).toBe(session.sid)
    expect(await sessions.use(handle)).toBeUndefined()
    const { rows } = await authz.db.query<{ client_id: string; status: string }>(
      'SELECT client_id, status FROM backchannel_logouts WHERE sid = $1',
      [session.sid],
    )
    expect(rows).toEqual([{ client_id: 'notified', status: 'pending' }])
  })
})
