// Builds the app on a fresh database with a manual clock and captured logs.
import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { buildApp } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import { createManualClock } from '../../src/domain/clock.js'
import { usernameDigest } from '../../src/interaction/password-check.js'
import type { GrantFactory } from '../../src/grants/registry.js'
import { createLogger } from '../../src/http/logger.js'
import type { BackchannelLogoutOptions, BackchannelLogoutWorker } from '../../src/flows/logout/backchannel-logout.js'
import { BACKCHANNEL_LOGOUT_WORKER } from '../../src/flows/logout/index.js'
import type { UpstreamOptions } from '../../src/flows/federation/index.js'
import type { MetadataFetchOptions } from '../../src/client-auth/metadata-fetch.js'
import { createTestDb, type TestDb } from './db.js'

export const TEST_ISSUER = 'https://authz.test'

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ ISSUER: TEST_ISSUER, LOG_LEVEL: 'info', CLIENT_CACHE_TTL: '0', ...env })
}

export interface TestApp {
  app: FastifyInstance
  db: TestDb['db']
  testDb: TestDb
  config: Config
  clock: ReturnType<typeof createManualClock>
  /** Every log line the app wrote, as raw JSON text (with LOG_FORMAT=pretty: as printed, without colours). */
  logs: string[]
  close(): Promise<void>
}

/** A logger whose every line is kept, as raw JSON text (or as printed, for LOG_FORMAT=pretty), for assertions on what was logged. */
export function captureLogs(config: Pick<Config, 'logLevel'> & Partial<Pick<Config, 'logFormat'>>): { logs: string[]; logger: Logger } {
  const logs: string[] = []
  const destination = new Writable({
    write(chunk, _enc, cb) {
      logs.push(...chunk.toString().split('\n').filter(Boolean))
      cb()
    },
  })
  return { logs, logger: createLogger({ level: config.logLevel, format: config.logFormat, destination, colorize: false }) }
}

export async function createTestApp(
  opts: {
    env?: Record<string, string>
    testDb?: TestDb
    grants?: GrantFactory[]
    backchannelLogout?: Partial<BackchannelLogoutOptions>
    upstream?: Partial<UpstreamOptions>
    metadataFetch?: Partial<MetadataFetchOptions>
  } = {},
): Promise<TestApp> {
  const testDb = opts.testDb ?? (await createTestDb())
  const config = testConfig(opts.env)
  const clock = createManualClock(Date.now())
  const { logs, logger } = captureLogs(config)
  const app = await buildApp({
    config,
    db: testDb.db,
    clock,
    logger,
    ...(opts.grants ? { grants: opts.grants } : {}),
    ...(opts.backchannelLogout ? { backchannelLogout: opts.backchannelLogout } : {}),
    ...(opts.upstream ? { upstream: opts.upstream } : {}),
    ...(opts.metadataFetch ? { metadataFetch: opts.metadataFetch } : {}),
  })
  await app.ready()
  return {
    app,
    db: testDb.db,
    testDb,
    config,
    clock,
    logs,
    async close() {
      await app.close()
      if (!opts.testDb) await testDb.close()
    },
  }
}

/** What an app on `db` counts and logs for a username no account has (its keyed digest, never the name). */
export async function unknownUsernameDigest(db: TestDb['db'], username: string): Promise<string> {
  const { rows } = await db.query<{ value: string }>(`SELECT value FROM server_secrets WHERE name = 'username-hmac' AND NOT encrypted`)
  return usernameDigest(Buffer.from(rows[0]!.value, 'base64url'), username)
}

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

export function form(params: Record<string, string>): string {
  return new URLSearchParams(params).toString()
}

export function basic(id: string, secret: string): string {
  // RFC 6749 §2.3.1: form-urlencode each part before base64.
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+')
  return `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64')}`
}

/** The app's back-channel logout worker (the logout flow registers it): runOnce() sends what is due now. */
export function backchannelLogoutWorker(app: FastifyInstance): BackchannelLogoutWorker {
  return app.authz.workers.get(BACKCHANNEL_LOGOUT_WORKER) as BackchannelLogoutWorker
}
