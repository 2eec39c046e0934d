// Our server as the end-to-end tests run it: a fresh database, the seed, listening on 127.0.0.1
// at a port chosen before the app is built, because the issuer (and so every URL in discovery and
// in the tokens) must name the address the browser and the relying party will reach. The system
// clock, since a real library and a real browser wait in real time; a silent logger. Also the
// person these tests sign in as, and the steps that fill in our sign-in and consent pages.
// Each relying party's own configuration stays in its test file, as its documentation gives it.
import type { Page } from 'playwright-core'
import type { Logger } from 'pino'
import { buildApp } from '../../src/app.js'
import { systemClock } from '../../src/domain/clock.js'
import type { UpstreamOptions } from '../../src/flows/federation/index.js'
import type { MetadataFetchOptions } from '../../src/client-auth/metadata-fetch.js'
import { createLogger } from '../../src/http/logger.js'
import { applySeed } from '../../src/seed/apply.js'
import { testConfig } from '../helpers/app.js'
import { createTestDb, type TestDb } from '../helpers/db.js'
import { freePort } from '../helpers/free-port.js'

export interface Authz {
  /** http://<issuerHost>:<port> or the `issuer` given, with no trailing slash, as the config holds it. */
  issuer: string
  /** The port it listens on, at 127.0.0.1. */
  port: number
  app: Awaited<ReturnType<typeof buildApp>>
  db: TestDb['db']
  /** Closes the app, then its database. */
  close(): Promise<void>
}

/**
 * Builds, seeds and starts the server. `issuerHost` is the host name the issuer uses: 127.0.0.1
 * unless a test wants another (cookies are per host, so it decides whose cookies reach whom);
 * the server listens on 127.0.0.1 either way. `issuer` replaces the whole issuer (a proxy's URL
 * in front of the server). `env` adds to the test configuration; `logger` replaces the silent one.
 */
export async function startAuthz(
  seed: unknown,
  opts: {
    issuerHost?: string
    issuer?: string
    env?: Record<string, string>
    upstream?: Partial<UpstreamOptions>
    logger?: Logger
    metadataFetch?: Partial<MetadataFetchOptions>
  } = {},
): Promise<Authz> {
  const testDb = await createTestDb()
  let app: Authz['app'] | undefined
  try {
    const port = await freePort()
    const config = testConfig({ ...opts.env, ISSUER: opts.issuer ?? `http://${opts.issuerHost ?? '127.0.0.1'}:${port}` })
    app = await buildApp({
      config,
      db: testDb.db,
      clock: systemClock,
      logger: opts.logger ?? createLogger({ level: 'silent' }),
      ...(opts.upstream ? { upstream: opts.upstream } : {}),
      ...(opts.metadataFetch ? { metadataFetch: opts.metadataFetch } : {}),
    })
    await applySeed(testDb.db, seed)
    await app.listen({ port, host: '127.0.0.1' })
    const started = app
    return {
      issuer: config.issuer,
      port,
      app: started,
      db: testDb.db,
      async close() {
        await started.close()
        await testDb.close()
      },
    }
  } catch (err) {
    // Whatever was made before the failure would otherwise outlive the test file.
    await app?.close()
    await testDb.close()
    throw err
  }
}

/** The person the relying-party tests sign in as; a test adds or replaces claims where it needs. */
export const ALICE = {
  subjectId: 'alice-1',
  username: 'alice',
  password: 'alice-pw',
  claims: { name: 'Alice Example', email: 'alice@example.com' },
} as const

type WaitFor = Parameters<Page['waitForURL']>[0]

/** On our sign-in page: types the user's name and password, submits, and waits for `next`. */
export async function signInAs(page: Page, user: { username: string; password: string }, next: WaitFor): Promise<void> {
  await page.fill('#username', user.username)
  await page.fill('#password', user.password)
  await Promise.all([page.waitForURL(next), page.click('button[type=submit]')])
}

/** On our consent page: approves, and waits for `next` (the client's redirect URI, usually). */
export async function approveConsent(page: Page, next: WaitFor): Promise<void> {
  await Promise.all([page.waitForURL(next), page.click('button[value=approve]')])
}
