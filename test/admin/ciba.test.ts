// /admin/ciba-requests: CIBA requests listed and answered for the person over the admin API. An
// approval here is an approval on the approval page: the polling client gets its tokens; a denial
// gets it access_denied; a request is named by its approval URL's id and its auth_req_id is never
// answered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CibaRequestView } from '../../src/admin/ciba.js'
import { applySeed } from '../../src/seed/apply.js'
import type { TestApp } from '../helpers/app.js'
import { postFormBasic } from '../helpers/http.js'
import { admin, ADMIN_SEED, adminAudit, adminToken, createAdminTestApp, PROBLEM, readToken } from './admin-fixtures.js'

const CIBA = 'urn:openid:params:grant-type:ciba'

let t: TestApp
let call: ReturnType<typeof admin>
let read: ReturnType<typeof admin>
beforeAll(async () => {
  t = await createAdminTestApp()
  await applySeed(t.db, {
    ...ADMIN_SEED,
    clients: [
      ...ADMIN_SEED.clients,
      { clientId: 'bank', secrets: [{ value: 'bank-secret' }], allowedGrantTypes: [CIBA], allowedScopes: ['openid', 'orders.read'] },
    ],
    users: [...ADMIN_SEED.users, { subjectId: 'bob-1', username: 'bob', password: 'bob-pw' }],
  })
  call = admin(t, await adminToken(t))
  read = admin(t, await readToken(t))
})
afterAll(async () => t.close())

/** A CIBA request of the client bank for `username`: its auth_req_id and the id the admin API names it by. */
async function start(username: string, extra: Record<string, string> = {}) {
  t.clock.advance(1) // one request per instant: the newest row is this one
  const res = await postFormBasic(
    t.app,
    '/connect/ciba',
    { scope: 'openid orders.read', login_hint: username, binding_message: 'K9', ...extra },
    'bank',
    'bank-secret',
  )
  expect(res.statusCode, res.body).toBe(200)
  const authReqId = res.json().auth_req_id as string
  const { rows } = await t.db.query<{ id: string }>(`SELECT id FROM ciba_requests ORDER BY created_at DESC, id DESC LIMIT 1`)
  return { authReqId, requestId: rows[0]!.id }
}

const poll = (authReqId: string) =>
  postFormBasic(t.app, '/connect/token', { grant_type: CIBA, auth_req_id: authReqId }, 'bank', 'bank-secret')

describe('admin API: CIBA requests', () => {
  let first: { authReqId: string; requestId: string }

  it('answers one request by the id of its approval URL, never its auth_req_id', async () => {
    first = await start('alice')
    const res = await read('GET', `/admin/ciba-requests/${first.requestId}`)
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    const now = new Date(t.clock.now()).toISOString()
    expect(res.json()).toEqual({
      requestId: first.requestId,
      clientId: 'bank',
      subjectId: 'alice-1',
      username: 'alice',
      status: 'pending',
      requestedScopes: ['openid', 'orders.read'],
      resources: [],
      acrValues: [],
      bindingMessage: 'K9',
      createdAt: now,
      expiresAt: new Date(t.clock.now() + 300_000).toISOString(),
    })
    expect(CibaRequestView.safeParse(res.json()).success).toBe(true)
    expect(first.requestId).toMatch(/^[0-9a-f]{32}$/)
    expect(res.body).not.toContain(first.authReqId)
  })

  it('answers 404 for an unknown request, and for an auth_req_id given as its name', async () => {
    for (const id of ['0123456789abcdef0123456789abcdef', first.authReqId, 'x'.repeat(100)]) {
      const res = await read('GET', `/admin/ciba-requests/${id}`)
      expect(res.statusCode).toBe(404)
      expect(res.headers).toMatchObject(PROBLEM)
      expect(res.json()).toEqual({ type: 'about:blank', title: 'Not Found', status: 404, detail: 'no such CIBA request' })
      expect((await call('POST', `/admin/ciba-requests/${id}/approve`)).statusCode).toBe(404)
    }
  })

  it('needs a token, and authz:admin to decide (authz:admin:read lists)', async () => {
    const none = await admin(t, undefined)('GET', '/admin/ciba-requests')
    expect(none.statusCode).toBe(401)
    expect(none.headers['www-authenticate']).toBe('Bearer realm="https://authz.test"')
    const res = await read('POST', `/admin/ciba-requests/${first.requestId}/approve`)
    expect(res.statusCode).toBe(403)
    expect(res.headers['www-authenticate']).toBe('Bearer realm="https://authz.test", error="insufficient_scope", scope="authz:admin"')
    expect((await read('GET', `/admin/ciba-requests/${first.requestId}`)).json().status).toBe('pending')
  })

  it('approves: the polling client then gets its tokens, and the approval is audited', async () => {
    expect((await poll(first.authReqId)).json()).toEqual({ error: 'authorization_pending' })
    const res = await call('POST', `/admin/ciba-requests/${first.requestId}/approve`)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({
      requestId: first.requestId,
      status: 'approved',
      approvedScopes: ['openid', 'orders.read'],
      decidedAt: new Date(t.clock.now()).toISOString(),
    })
    t.clock.advance(5)
    const tokens = await poll(first.authReqId)
    expect(tokens.statusCode, tokens.body).toBe(200)
    expect(tokens.json()).toMatchObject({ token_type: 'Bearer', scope: 'openid orders.read' })
    expect(tokens.json().access_token).toEqual(expect.any(String))
    expect(tokens.json().id_token).toEqual(expect.any(String))
    const audit = t.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.log === 'audit')
    expect(audit).toContainEqual(
      expect.objectContaining({ event: 'ciba.approved', client_id: 'bank', subject: 'alice-1', ciba_request_id: first.requestId }),
    )
    expect(adminAudit(t).at(-1)).toMatchObject({
      event: 'admin.changed',
      client_id: 'automation',
      resource: `ciba-requests/${first.requestId}`,
      action: 'approve',
      changes: ['status'],
    })
    expect((await read('GET', `/admin/ciba-requests/${first.requestId}`)).json()).toMatchObject({
      status: 'approved',
      tokensIssuedAt: new Date(t.clock.now()).toISOString(),
    })
  })

  it('answers 409 for a request decided already, changing nothing', async () => {
    const before = adminAudit(t).length
    for (const decision of ['approve', 'deny']) {
      const res = await call('POST', `/admin/ciba-requests/${first.requestId}/${decision}`)
      expect(res.statusCode).toBe(409)
      expect(res.headers).toMatchObject(PROBLEM)
      expect(res.json()).toEqual({ type: 'about:blank', title: 'Conflict', status: 409, detail: 'the CIBA request was already approved' })
    }
    expect(adminAudit(t)).toHaveLength(before)
  })

  it('denies: the polling client then gets access_denied', async () => {
    const { authReqId, requestId } = await start('bob')
    const res = await call('POST', `/admin/ciba-requests/${requestId}/deny`)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ requestId, username: 'bob', status: 'denied' })
    expect(res.json()).not.toHaveProperty('approvedScopes')
    const denied = await poll(authReqId)
    expect({ status: denied.statusCode, body: denied.json() }).toEqual({
      status: 400,
      body: { error: 'access_denied', error_description: 'the user denied the request' },
    })
    expect(adminAudit(t).at(-1)).toMatchObject({ resource: `ciba-requests/${requestId}`, action: 'deny' })
  })

  it('lists requests oldest first, a page at a time, filtered by client, user, subject and status', async () => {
    const pending = await start('alice')
    const all = await read('GET', '/admin/ciba-requests')
    expect(all.statusCode).toBe(200)
    const items = all.json().items as CibaRequestView[]
    expect(items.map((r) => [r.username, r.status])).toEqual([
      ['alice', 'approved'],
      ['bob', 'denied'],
      ['alice', 'pending'],
    ])
    for (const r of items) expect(CibaRequestView.safeParse(r).success).toBe(true)
    expect(all.json()).not.toHaveProperty('nextCursor')

    const p1 = (await read('GET', '/admin/ciba-requests?limit=2')).json()
    expect(p1.items.map((r: CibaRequestView) => r.status)).toEqual(['approved', 'denied'])
    const p2 = (await read('GET', `/admin/ciba-requests?limit=2&cursor=${p1.nextCursor}`)).json()
    expect(p2).toEqual({ items: [items[2]] })

    const ids = async (query: string) =>
      ((await read('GET', `/admin/ciba-requests?${query}`)).json().items as CibaRequestView[]).map((r) => r.requestId)
    expect(await ids('status=pending')).toEqual([pending.requestId])
    expect(await ids('username=bob')).toEqual([items[1]!.requestId])
    expect(await ids('subjectId=alice-1&status=approved')).toEqual([first.requestId])
    expect(await ids('clientId=bank')).toHaveLength(3)
    expect(await ids('clientId=backend')).toEqual([])
    expect(await ids('username=nobody')).toEqual([])
  })

  it('answers an expired request as expired: listed so, and 409 to a decision', async () => {
    const { requestId } = await start('bob')
    t.clock.advance(301)
    const res = await call('POST', `/admin/ciba-requests/${requestId}/approve`)
    expect(res.statusCode).toBe(409)
    expect(res.json()).toEqual({ type: 'about:blank', title: 'Conflict', status: 409, detail: 'the CIBA request has expired' })
    const listed = (await read('GET', '/admin/ciba-requests?status=expired')).json().items as CibaRequestView[]
    expect(listed.map((r) => r.requestId)).toContain(requestId)
    expect((await read('GET', '/admin/ciba-requests?status=pending')).json()).toEqual({ items: [] })
  })

  it('refuses a bad query with the path of each problem', async () => {
    const res = await read('GET', '/admin/ciba-requests?status=lost&limit=0&auth_req_id=x')
    expect(res.statusCode).toBe(400)
    expect(res.headers).toMatchObject(PROBLEM)
    expect(res.json()).toEqual({
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      detail: 'the query is not valid',
      errors: [
        { path: 'limit', detail: 'Too small: expected number to be >=1' },
        { path: 'status', detail: 'Invalid option: expected one of "pending"|"approved"|"denied"|"expired"' },
        { path: '(root)', detail: 'Unrecognized key: "auth_req_id"' },
      ],
    })
    const cursor = await read('GET', '/admin/ciba-requests?cursor=bm9wZQ')
    expect(cursor.statusCode).toBe(400)
    expect(cursor.json().detail).toBe('cursor is not one this API gave')
  })
})
