// The admin API under test: the app with ADMIN_PORT set (its admin listener reached through
// app.inject, never bound), a seed with an admin client, a read-only one and an ordinary one, and
// tokens got the way automation gets them: client credentials at the token endpoint.
import type { InjectOptions } from 'fastify'
import { expect } from 'vitest'
import { applySeed } from '../../src/seed/apply.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { postFormBasic } from '../helpers/http.js'

export const CC = 'client_credentials'

export const ADMIN_SEED = {
  apiScopes: [{ name: 'orders.read' }],
  apiResources: [{ name: 'orders-api', scopes: ['orders.read'], secrets: [{ value: 'orders-secret' }] }],
  identityResources: ['openid'],
  clients: [
    { clientId: 'automation', secrets: [{ value: 'automation-secret' }], allowedGrantTypes: [CC], allowedScopes: ['authz:admin'] },
    { clientId: 'auditor', secrets: [{ value: 'auditor-secret' }], allowedGrantTypes: [CC], allowedScopes: ['authz:admin:read'] },
    { clientId: 'backend', secrets: [{ value: 'backend-secret' }], allowedGrantTypes: [CC], allowedScopes: ['orders.read'] },
  ],
  users: [{ subjectId: 'alice-1', username: 'alice', password: 'alice-pw', claims: { email: 'alice@example.com' } }],
}

export async function createAdminTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const t = await createTestApp({ env: { ADMIN_PORT: '0', ...env } })
  await applySeed(t.db, ADMIN_SEED)
  return t
}

export async function tokenFor(t: TestApp, clientId: string, secret: string, scope: string): Promise<string> {
  const res = await postFormBasic(t.app, '/connect/token', { grant_type: CC, scope }, clientId, secret)
  expect(res.statusCode, res.body).toBe(200)
  return res.json().access_token as string
}

export const adminToken = (t: TestApp) => tokenFor(t, 'automation', 'automation-secret', 'authz:admin')
export const readToken = (t: TestApp) => tokenFor(t, 'auditor', 'auditor-secret', 'authz:admin:read')

/** A request to the admin listener with `token` as its Bearer credential. */
export function admin(t: TestApp, token: string | undefined) {
  return (method: InjectOptions['method'], url: string, opts: { body?: unknown; headers?: Record<string, string> } = {}) =>
    t.app.authz.admin!.app.inject({
      method,
      url,
      headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...opts.headers },
      ...(opts.body === undefined ? {} : { payload: opts.body as object }),
    })
}

/** The audit lines of admin writes, as written. */
export function adminAudit(t: TestApp): Record<string, unknown>[] {
  return t.logs
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.log === 'audit' && String(l.event).startsWith('admin.'))
}

export const PROBLEM = { 'content-type': 'application/problem+json; charset=utf-8', 'cache-control': 'no-store' }
