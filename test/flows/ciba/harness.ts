// A CIBA test app: createTestApp's setup plus a notifier that captures notifications, the CIBA
// seed (clients with registered keys, users with and without user codes) and form helpers.
import type { FastifyInstance } from 'fastify'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose'
import { buildApp } from '../../../src/app.js'
import type { Config } from '../../../src/config.js'
import { createManualClock } from '../../../src/domain/clock.js'
import { applySeed } from '../../../src/seed/apply.js'
import type { CibaNotification, CibaNotifier } from '../../../src/flows/ciba/notifier.js'
import { captureLogs, testConfig, TEST_ISSUER } from '../../helpers/app.js'
import { postForm } from '../../helpers/http.js'
import { createTestDb, type TestDb } from '../../helpers/db.js'

export const CIBA = 'urn:openid:params:grant-type:ciba'
export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' }

export interface CibaKeys {
  privateKey: CryptoKey
  kid: string
  alg: 'ES256'
}

export interface CibaTestApp {
  app: FastifyInstance
  db: TestDb['db']
  config: Config
  clock: ReturnType<typeof createManualClock>
  logs: string[]
  notifications: CibaNotification[]
  clientKey: CibaKeys
  otherKey: CibaKeys
  /** With `listen`: the server's address, also the issuer. */
  baseUrl: string
  close(): Promise<void>
}

/** A free port for a server whose issuer must be its listening address. */
async function freePort(): Promise<number> {
  const probe = (await import('node:net')).createServer()
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()))
  const port = (probe.address() as { port: number }).port
  await new Promise<void>((r) => probe.close(() => r()))
  return port
}

async function newKey(kid: string) {
  const { publicKey, privateKey } = await generateKeyPair('ES256')
  return { key: { privateKey, kid, alg: 'ES256' as const }, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } }
}

export function cibaSeed(jwk: Record<string, unknown>) {
  return {
    apiScopes: [{ name: 'orders.read', displayName: 'Read your orders' }, { name: 'orders.write' }],
    apiResources: [{ name: 'orders-api', scopes: ['orders.read', 'orders.write'], secrets: [{ value: 'api-secret' }] }],
    identityResources: [
      { name: 'openid', displayName: 'Your user identifier', claims: ['sub'] },
      { name: 'profile', displayName: 'Your name', claims: ['name'] },
      { name: 'email', displayName: 'Your e-mail address', claims: ['email'] },
      'offline_access',
    ],
    clients: [
      {
        clientId: 'bank',
        clientName: 'Bank <App>',
        secrets: [{ value: 'bank-secret' }],
        allowedGrantTypes: [CIBA],
        allowedScopes: ['openid', 'profile', 'email', 'orders.read', 'offline_access'],
        allowOfflineAccess: true,
        cibaLifetime: 120,
        pollingInterval: 5,
        identityProviderRestrictions: ['corp-ad'],
        allowedTenants: ['acme'],
        jwks: { keys: [jwk] },
      },
      { clientId: 'plain', secrets: [{ value: 'plain-secret' }], allowedGrantTypes: [CIBA], allowedScopes: ['openid', 'orders.read'] },
      { clientId: 'cc-only', secrets: [{ value: 'cc-secret' }], allowedGrantTypes: ['client_credentials'], allowedScopes: ['orders.read'] },
      { clientId: 'public', requireClientSecret: false, allowedGrantTypes: [CIBA], allowedScopes: ['openid'] },
    ],
    users: [
      { subjectId: 'u-alice', username: 'alice', password: 'alice-pw', claims: { name: 'Alice Example', email: 'alice@example.com' } },
      { subjectId: 'u-bob', username: 'bob', password: 'bob-pw', cibaUserCode: '4711', claims: { name: 'Bob', email: 'bob@example.com' } },
      { subjectId: 'u-carol', username: 'carol', password: 'carol-pw', enabled: false, claims: {} },
    ],
    // acr_values idp: names a configured provider (never contacted here).
    identityProviders: [
      { scheme: 'corp-ad', displayName: 'Corp AD', type: 'oidc', authority: 'https://corp-ad.example', clientId: 'authz' },
    ],
  }
}

export async function createCibaTestApp(
  opts: {
    env?: Record<string, string>
    notifier?: CibaNotifier | false
    listen?: boolean
    /** Adds test-only routes before the app is ready. */
    beforeReady?: (app: FastifyInstance) => Promise<void>
  } = {},
): Promise<CibaTestApp> {
  const testDb = await createTestDb()
  const port = opts.listen ? await freePort() : undefined
  const config = testConfig({ ...opts.env, ...(port ? { ISSUER: `http://127.0.0.1:${port}` } : {}) })
  const clock = createManualClock(Date.now())
  const { logs, logger } = captureLogs(config)
  const notifications: CibaNotification[] = []
  const capture: CibaNotifier = { notify: (n) => void notifications.push(n), drain: async () => {} }
  const notifier = opts.notifier === false ? undefined : (opts.notifier ?? capture)
  const app = await buildApp({ config, db: testDb.db, clock, logger, ...(notifier ? { cibaNotifier: notifier } : {}) })
  await opts.beforeReady?.(app)
  await app.ready()
  const client = await newKey('bank-1')
  const other = await newKey('other-1')
  await applySeed(testDb.db, cibaSeed(client.jwk))
  if (port) await app.listen({ port, host: '127.0.0.1' })
  return {
    app,
    db: testDb.db,
    config,
    clock,
    logs,
    notifications,
    clientKey: client.key,
    otherKey: other.key,
    baseUrl: config.issuer,
    async close() {
      await app.close()
      await testDb.close()
    },
  }
}

export const BANK = { client_id: 'bank', client_secret: 'bank-secret' }

/** A JWT signed with a test key, times from the app's clock. */
export async function signJwt(authz: CibaTestApp, key: CibaKeys, claims: JWTPayload, opts: { lifetime?: number } = {}) {
  const now = Math.floor(authz.clock.now() / 1000)
  return new SignJWT({ iat: now, nbf: now, exp: now + (opts.lifetime ?? 60), ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid })
    .sign(key.privateKey)
}

export function startCiba(authz: CibaTestApp, params: Record<string, string>, headers: Record<string, string> = {}) {
  return postForm(authz.app, '/connect/ciba', params, headers)
}

export function poll(authz: CibaTestApp, authReqId: string, client = BANK) {
  return postForm(authz.app, '/connect/token', { ...client, grant_type: CIBA, auth_req_id: authReqId })
}

export { TEST_ISSUER }
