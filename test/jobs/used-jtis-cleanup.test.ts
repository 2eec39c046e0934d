// The used jtis (client assertions, DPoP proofs, request objects, passkey challenges, upstream
// logout tokens) are a shared table: the Core's own cleanup removes the expired ones, whether or
// not the CIBA flow is registered, and keeps the ones still in force.
import pino from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { discardAudit } from '../../src/observe/audit.js'
import { createCore } from '../../src/create-core.js'
import { createManualClock } from '../../src/domain/clock.js'
import { cibaFlow } from '../../src/flows/ciba/index.js'
import { createServer } from '../../src/http/server.js'
import { createCleanup } from '../../src/jobs/cleanup.js'
import { createLook } from '../../src/pages/look.js'
import { createPgUsedJtiStore } from '../../src/stores/used-jtis.postgres.js'
import { testConfig } from '../helpers/app.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let testDb: TestDb
beforeEach(async () => {
  testDb = await createTestDb()
})
afterEach(() => testDb?.close())

/** The Core on the test database, with the CIBA flow registered or not; returns its cleanup tasks. */
async function coreCleanupTasks(clock: ReturnType<typeof createManualClock>, withCiba: boolean) {
  const config = testConfig()
  const logger = pino({ level: 'silent' })
  const look = createLook(config)
  const app = await createServer(config, logger, look)
  const { core, runtime } = await createCore({ app, config, db: testDb.db, clock, logger, audit: discardAudit, metrics: undefined, look })
  if (withCiba) await cibaFlow({ notifier: { notify: () => {}, drain: async () => {} } }).register(core)
  return { tasks: runtime.cleanupTasks, close: () => app.close() }
}

describe('cleanup of used jtis', () => {
  for (const withCiba of [false, true]) {
    it(`removes the expired ones and keeps the rest ${withCiba ? 'with' : 'without'} the CIBA flow`, async () => {
      const clock = createManualClock(Date.now())
      const now = clock.now()
      const used = createPgUsedJtiStore(testDb.db)
      expect(await used.use('client-a', 'expired-assertion', now + 30_000, now)).toBe(true)
      expect(await used.use('dpop:some-jkt', 'expired-proof', now + 61_000, now)).toBe(true)
      expect(await used.use('client-a', 'live-assertion', now + 600_000, now)).toBe(true)
      clock.advance(120)

      const { tasks, close } = await coreCleanupTasks(clock, withCiba)
      try {
        expect(tasks.filter((t) => t.name === 'usedJtis')).toHaveLength(1)
        const cleanup = createCleanup({ clock, logger: { info: () => {}, warn: () => {} }, tasks })
        expect((await cleanup.runOnce()).usedJtis).toBe(2)
        const { rows } = await testDb.db.query<{ client_id: string; jti: string }>('SELECT client_id, jti FROM used_jtis ORDER BY jti')
        expect(rows).toEqual([{ client_id: 'client-a', jti: 'live-assertion' }])
        // The live one is still refused as a replay.
        expect(await used.use('client-a', 'live-assertion', clock.now() + 600_000, clock.now())).toBe(false)
      } finally {
        await close()
      }
    })
  }
})
