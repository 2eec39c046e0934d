import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPgCibaRequestStore } from '../../../src/stores/ciba-requests.postgres.js'
import { createPgUsedJtiStore } from '../../../src/stores/used-jtis.postgres.js'
import type { NewCibaRequest } from '../../../src/stores/ciba-requests.js'
import { handleHash } from '../../../src/stores/columns.postgres.js'
import { createTestDb, type TestDb } from '../../helpers/db.js'

let authz: TestDb
beforeAll(async () => {
  authz = await createTestDb()
  await authz.db.query(`INSERT INTO users (subject_id, username) VALUES ('u-1', 'alice')`)
})
afterAll(() => authz.close())

const T0 = Date.UTC(2026, 0, 1)
let n = 0
function newRequest(over: Partial<NewCibaRequest> = {}): NewCibaRequest {
  n += 1
  return {
    id: `req-${n}`,
    authReqId: `auth-req-${n}`,
    clientId: 'c1',
    subjectId: 'u-1',
    requestedScopes: ['openid'],
    resources: [],
    acrValues: [],
    tenant: undefined,
    idp: undefined,
    bindingMessage: undefined,
    intervalSeconds: 5,
    familyId: `fam-${n}`,
    createdAt: T0,
    expiresAt: T0 + 300_000,
    ...over,
  }
}

describe('ciba request store', () => {
  it('stores only the hash of the auth_req_id and finds by it', async () => {
    const store = createPgCibaRequestStore(authz.db)
    const r = newRequest({ tenant: 'acme', bindingMessage: 'W4SCT', acrValues: ['1'] })
    await store.create(r)
    const { rows } = await authz.db.query<{ auth_req_id_hash: string }>('SELECT auth_req_id_hash FROM ciba_requests WHERE id = $1', [r.id])
    expect(rows[0]!.auth_req_id_hash).toBe(handleHash(r.authReqId))
    const found = await store.findByAuthReqId(r.authReqId)
    expect(found).toEqual({
      id: r.id,
      clientId: 'c1',
      subjectId: 'u-1',
      requestedScopes: ['openid'],
      resources: [],
      acrValues: ['1'],
      tenant: 'acme',
      idp: undefined,
      bindingMessage: 'W4SCT',
      status: 'pending',
      approvedScopes: undefined,
      authTime: undefined,
      intervalSeconds: 5,
      lastPolledAt: undefined,
      familyId: r.familyId,
      createdAt: T0,
      expiresAt: T0 + 300_000,
      decidedAt: undefined,
      consumedAt: undefined,
      deliveryMode: 'poll',
    })
    expect(await store.findById(r.id)).toEqual(found)
    expect(await store.findByAuthReqId(r.id)).toBeUndefined()
  })

  it('accepts the first poll, refuses a sooner one with interval + 5 and measures from the accepted poll', async () => {
    const store = createPgCibaRequestStore(authz.db)
    const r = newRequest()
    await store.create(r)
    expect(await store.recordPoll(r.id, T0 + 1000)).toEqual({ accepted: true, intervalSeconds: 5 })
    expect(await store.recordPoll(r.id, T0 + 3000)).toEqual({ accepted: false, intervalSeconds: 10 })
    // 10 s after the accepted poll, not after the refused one
    expect(await store.recordPoll(r.id, T0 + 10_000)).toEqual({ accepted: false, intervalSeconds: 15 })
    expect(await store.recordPoll(r.id, T0 + 16_000)).toEqual({ accepted: true, intervalSeconds: 15 })
    expect((await store.findById(r.id))!.lastPolledAt).toBe(T0 + 16_000)
    expect(await store.recordPoll('nope', T0)).toBeUndefined()
  })

  it('accepts exactly one of concurrent polls', async () => {
    const store = createPgCibaRequestStore(authz.db)
    const r = newRequest()
    await store.create(r)
    const results = await Promise.all(Array.from({ length: 10 }, () => store.recordPoll(r.id, T0 + 1000)))
    expect(results.filter((x) => x!.accepted)).toHaveLength(1)
    expect((await store.findById(r.id))!.intervalSeconds).toBe(5 + 9 * 5)
  })

  it('decides only while pending and unexpired, and consumes once under concurrency', async () => {
    const store = createPgCibaRequestStore(authz.db)
    const late = newRequest()
    await store.create(late)
    expect(await store.decide(late.id, { status: 'denied' }, T0 + 300_000)).toBeUndefined()
    const r = newRequest()
    await store.create(r)
    expect(await store.consume(r.id, T0 + 1000)).toBeUndefined()
    const approved = await store.decide(r.id, { status: 'approved', approvedScopes: ['openid'], authTime: T0 + 500 }, T0 + 600)
    expect(approved).toMatchObject({ status: 'approved', approvedScopes: ['openid'], authTime: T0 + 500, decidedAt: T0 + 600 })
    expect(await store.decide(r.id, { status: 'denied' }, T0 + 700)).toBeUndefined()
    const results = await Promise.all(Array.from({ length: 10 }, () => store.consume(r.id, T0 + 1000)))
    expect(results.filter(Boolean)).toHaveLength(1)
    expect((await store.findById(r.id))!.consumedAt).toBe(T0 + 1000)
  })

  it('lists and counts pending requests and removes expired ones in batches', async () => {
    const store = createPgCibaRequestStore(authz.db)
    await authz.db.query('DELETE FROM ciba_requests')
    for (let i = 0; i < 5; i++) await store.create(newRequest({ createdAt: T0 + i, expiresAt: T0 + 1000 + i }))
    const live = newRequest({ expiresAt: T0 + 900_000 })
    await store.create(live)
    expect((await store.listPending(T0 + 2000, 10)).map((x) => x.id)).toEqual([live.id])
    // The cap counts this client's pending, unexpired requests for this user: 6 at T0.
    const cap = (maxPending: number) => ({ maxPending, maxPerWindow: 0, windowMs: 60_000 })
    expect(await store.createWithinLimit(newRequest(), cap(7), T0)).toEqual({ kind: 'created' })
    expect(await store.createWithinLimit(newRequest(), cap(7), T0)).toEqual({ kind: 'pending' })
    expect(await store.createWithinLimit(newRequest({ clientId: 'c2' }), cap(7), T0)).toEqual({ kind: 'created' })
    expect(await store.createWithinLimit(newRequest({ subjectId: 'u-2' }), cap(7), T0)).toEqual({ kind: 'created' })
    expect(await store.createWithinLimit(newRequest(), cap(3), T0 + 2000)).toEqual({ kind: 'created' }) // the 5 short-lived ones expired
    expect(await store.createWithinLimit(newRequest(), cap(0), T0)).toEqual({ kind: 'created' }) // 0: no cap
    await authz.db.query(`DELETE FROM ciba_requests WHERE client_id = 'c2' OR subject_id = 'u-2' OR created_at = $1 AND expires_at = $2`, [
      new Date(T0),
      new Date(T0 + 300_000),
    ])
    expect(await store.removeExpired(T0 + 2000, 3)).toBe(3)
    expect(await store.removeExpired(T0 + 2000, 3)).toBe(2)
    expect(await store.removeExpired(T0 + 2000, 3)).toBe(0)
    expect(await store.findById(live.id)).toBeDefined()
  })
})

describe('ciba request store: the rate per client and user', () => {
  it('counts every request of the window whatever its status, and tells when the window has a place again', async () => {
    const store = createPgCibaRequestStore(authz.db)
    await authz.db.query('DELETE FROM ciba_requests')
    const rate = { maxPending: 0, maxPerWindow: 3, windowMs: 60_000 }
    // Three at T0, T0+10 s, T0+20 s, each expired before the next: the pending cap would never see them.
    for (const at of [T0, T0 + 10_000, T0 + 20_000]) {
      expect(await store.createWithinLimit(newRequest({ createdAt: at, expiresAt: at + 1000 }), rate, at)).toEqual({ kind: 'created' })
    }
    await authz.db.query(`UPDATE ciba_requests SET status = 'denied' WHERE created_at = $1`, [new Date(T0)])
    // Full until the oldest of the three is 60 s old.
    expect(await store.createWithinLimit(newRequest({ createdAt: T0 + 30_000 }), rate, T0 + 30_000)).toEqual({
      kind: 'rate',
      retryAt: T0 + 60_000,
    })
    expect(await store.createWithinLimit(newRequest({ createdAt: T0 + 59_999 }), rate, T0 + 59_999)).toEqual({
      kind: 'rate',
      retryAt: T0 + 60_000,
    })
    expect(await store.createWithinLimit(newRequest({ clientId: 'c2', createdAt: T0 + 30_000 }), rate, T0 + 30_000)).toEqual({
      kind: 'created',
    })
    expect(await store.createWithinLimit(newRequest({ subjectId: 'u-2', createdAt: T0 + 30_000 }), rate, T0 + 30_000)).toEqual({
      kind: 'created',
    })
    expect(await store.createWithinLimit(newRequest({ createdAt: T0 + 60_000 }), rate, T0 + 60_000)).toEqual({ kind: 'created' })
    // Now T0+10 s, +20 s and +60 s fill it: the next place frees when T0+10 s leaves.
    expect(await store.createWithinLimit(newRequest({ createdAt: T0 + 61_000 }), rate, T0 + 61_000)).toEqual({
      kind: 'rate',
      retryAt: T0 + 70_000,
    })
    expect(await store.createWithinLimit(newRequest({ createdAt: T0 + 61_000 }), { ...rate, maxPerWindow: 0 }, T0 + 61_000)).toEqual({
      kind: 'created',
    })
    await authz.db.query('DELETE FROM ciba_requests')
  })
})

describe('used jti store', () => {
  it('accepts a jti once per client until it expires, once under concurrency', async () => {
    const store = createPgUsedJtiStore(authz.db)
    const results = await Promise.all(Array.from({ length: 5 }, () => store.use('c1', 'j1', T0 + 60_000, T0)))
    expect(results.filter(Boolean)).toHaveLength(1)
    expect(await store.use('c2', 'j1', T0 + 60_000, T0)).toBe(true)
    expect(await store.use('c1', 'j1', T0 + 120_000, T0 + 60_000)).toBe(true)
    expect(await store.removeExpired(T0 + 200_000, 10)).toBe(2)
  })
})
