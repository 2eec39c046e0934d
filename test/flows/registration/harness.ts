// Dynamic Client Registration over app.inject: an app with the REGISTRATION policy given, the
// authorization-code harness's catalogue and people, and JSON requests as a client sends them.
import type { FastifyInstance } from 'fastify'
import { applySeed } from '../../../src/seed/apply.js'
import { createTestApp, type TestApp } from '../../helpers/app.js'
import { authorizeSeed } from '../authorization-code/harness.js'

export const JSON_TYPE = { 'content-type': 'application/json' }

export async function createRegistrationTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const authz = await createTestApp({
    env: { REGISTRATION: 'open', REGISTRATION_ALLOWED_SCOPES: 'openid profile offline_access orders.read', ...env },
  })
  await applySeed(authz.db, authorizeSeed())
  return authz
}

/** POST /connect/register with `body` as JSON (and `headers`, e.g. an initial access token). */
export function register(app: FastifyInstance, body: unknown, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: '/connect/register', headers: { ...JSON_TYPE, ...headers }, payload: JSON.stringify(body) })
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** The path of a registration_client_uri (RFC 7592), for app.inject. */
export const pathOf = (uri: unknown) => new URL(String(uri)).pathname

export const PUBLIC_CLIENT = {
  client_name: 'Assistant',
  redirect_uris: ['http://127.0.0.1:33418/callback'],
  grant_types: ['authorization_code', 'refresh_token'],
  token_endpoint_auth_method: 'none',
  scope: 'openid profile offline_access',
}
