// /admin/registration-tokens: the initial access tokens of REGISTRATION=token made, listed and
// revoked over the admin API, as `authz registration-tokens` has them: a token is answered once
// (201), works at the registration endpoint until it is revoked, and a list never carries it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../helpers/app.js'
import { admin, adminAudit, adminToken, createAdminTestApp, PROBLEM, readToken } from './admin-fixtures.js'

let t: TestApp
let call: ReturnType<typeof admin>
let read: ReturnType<typeof admin>
beforeAll(async () => {
  t = await createAdminTestApp({ REGISTRATION: 'token', REGISTRATION_ALLOWED_SCOPES: 'openid' })
  call = admin(t, await adminToken(t))
  read = admin(t, await readToken(t))
})
afterAll(async () => t.close())

const register = (token: string) =>
  t.app.inject({
    method: 'POST',
    url: '/connect/register',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    payload: JSON.stringify({
      client_name: 'Assistant',
      redirect_uris: ['http://127.0.0.1:33418/callback'],
      token_endpoint_auth_method: 'none',
      scope: 'openid',
    }),
  })

describe('admin API: registration tokens', () => {
  let id: string
  let token: string

  it('makes a token answered once (201), that registers a client; the list counts the use and never carries it', async () => {
    expect((await read('GET', '/admin/registration-tokens')).json()).toEqual({ items: [] })
    const now = t.clock.now()
    const res = await call('POST', '/admin/registration-tokens', { body: { expiresIn: 3600, maxUses: 2, description: 'IDE team' } })
    expect(res.statusCode).toBe(201)
    expect(res.headers['cache-control']).toBe('no-store')
    const made = res.json()
    expect(made).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{12}$/),
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      state: 'usable',
      description: 'IDE team',
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + 3_600_000).toISOString(),
      uses: 0,
      maxUses: 2,
    })
    ;({ id, token } = made)
    expect(adminAudit(t).at(-1)).toMatchObject({ event: 'admin.changed', client_id: 'automation', resource: `registration-tokens/${id}` })
    expect(JSON.stringify(adminAudit(t))).not.toContain(token)
    const { rows } = await t.db.query<{ token_hash: string }>('SELECT token_hash FROM registration_tokens')
    expect(rows.map((r) => r.token_hash)).not.toContain(token)

    expect((await register(token)).statusCode).toBe(201)
    const listed = await read('GET', '/admin/registration-tokens')
    expect(listed.statusCode).toBe(200)
    const { token: _shownOnce, ...stored } = made
    expect(listed.json().items).toEqual([{ ...stored, uses: 1 }])
    expect(listed.body).not.toContain(token)
  })

  it('makes a token of seven days for any number of uses when the body asks for nothing', async () => {
    const res = await call('POST', '/admin/registration-tokens', { body: {} })
    expect(res.statusCode).toBe(201)
    expect(res.json()).not.toHaveProperty('maxUses')
    expect(Date.parse(res.json().expiresAt) - t.clock.now()).toBe(7 * 86_400_000)
  })

  it('refuses a body out of bounds, each problem with its path', async () => {
    const res = await call('POST', '/admin/registration-tokens', {
      body: { expiresIn: 0, maxUses: 1.5, description: 'a\nb', token: 'mine' },
    })
    expect(res.statusCode).toBe(400)
    expect(res.headers).toMatchObject(PROBLEM)
    expect(
      res
        .json()
        .errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(['(root)', 'description', 'expiresIn', 'maxUses'])
  })

  it('revokes a token: the registration endpoint refuses it, the list says so, and a second revocation is 409', async () => {
    t.clock.advance(1000)
    const res = await call('POST', `/admin/registration-tokens/${id}/revoke`)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ id, state: 'revoked', revokedAt: new Date(t.clock.now()).toISOString(), uses: 1 })
    expect(res.body).not.toContain(token)
    expect((await register(token)).statusCode).toBe(401)
    const items = (await read('GET', '/admin/registration-tokens')).json().items as { id: string }[]
    expect(items.find((i) => i.id === id)).toMatchObject({ state: 'revoked' })
    expect(adminAudit(t).at(-1)).toMatchObject({ resource: `registration-tokens/${id}`, action: 'revoke' })

    const again = await call('POST', `/admin/registration-tokens/${id}/revoke`)
    expect(again.statusCode).toBe(409)
    expect(again.json().detail).toBe('the registration token was revoked already')
  })

  it('answers 404 to a token that is not there', async () => {
    const res = await call('POST', '/admin/registration-tokens/nope/revoke')
    expect(res.statusCode).toBe(404)
    expect(res.headers).toMatchObject(PROBLEM)
    expect(res.json().detail).toBe('no such registration token')
  })

  it('needs a token to read, and authz:admin to make or revoke', async () => {
    expect((await admin(t, undefined)('GET', '/admin/registration-tokens')).statusCode).toBe(401)
    const refused = await read('POST', '/admin/registration-tokens', { body: {} })
    expect(refused.statusCode).toBe(403)
    expect(refused.headers['www-authenticate']).toContain('error="insufficient_scope", scope="authz:admin"')
    expect((await read('POST', `/admin/registration-tokens/${id}/revoke`)).statusCode).toBe(403)
    expect((await read('GET', '/admin/registration-tokens')).json().items).toHaveLength(2)
  })

  it('lists the tokens a page at a time, oldest first', async () => {
    const made: string[] = []
    for (const description of ['first', 'second', 'third']) {
      t.clock.advance(1)
      const res = await call('POST', '/admin/registration-tokens', { body: { description } })
      expect(res.statusCode, res.body).toBe(201)
      made.push(res.json().id as string)
    }
    const allRes = await read('GET', '/admin/registration-tokens')
    expect(allRes.statusCode, allRes.body).toBe(200)
    const all = allRes.json()
    expect(all).not.toHaveProperty('nextCursor')
    const ids = (all.items as { id: string }[]).map((i) => i.id)
    expect(ids.slice(-3)).toEqual(made)
    const pages: string[] = []
    let cursor: string | undefined
    do {
      const res = await read('GET', `/admin/registration-tokens?limit=2${cursor === undefined ? '' : `&cursor=${cursor}`}`)
      expect(res.statusCode).toBe(200)
      const page = res.json<{ items: { id: string; token?: string }[]; nextCursor?: string }>()
      expect(page.items.length).toBeLessThanOrEqual(2)
      expect(page.items.every((i) => i.token === undefined)).toBe(true)
      pages.push(...page.items.map((i) => i.id))
      cursor = page.nextCursor
    } while (cursor !== undefined)
    expect(pages).toEqual(ids)
    expect((await read('GET', '/admin/registration-tokens?limit=0')).statusCode).toBe(400)
  })
})
