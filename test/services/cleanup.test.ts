// Expired state is removed in small batches, and nothing that is still valid.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createManualClock } from '../../src/domain/clock.js'
import { createCleanup } from '../../src/services/cleanup.js'
import { createPgGrantStore } from '../../src/stores/postgres/grants.js'
import { createPgRevocationStore } from '../../src/stores/postgres/revocations.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let t: TestDb
beforeAll(async () => {
  t = await createTestDb()
})
afterAll(() => t.close())

describe('cleanup', () => {
  it('removes expired grants and revocations in batches, keeps the rest, and reports the counts', async () => {
    const clock = createManualClock()
    const now = clock.now()
    const grants = createPgGrantStore(t.db)
    const revocations = createPgRevocationStore(t.db)
    for (let i = 0; i < 5; i++) {
      await grants.store({
        handle: `expired-${i}`, kind: 'reference_token', clientId: 'c', subjectId: undefined, familyId: `f${i}`,
        data: {}, createdAt: now - 7200_000, expiresAt: now - 1000,
      })
      await revocations.revoke({ jti: `gone-${i}`, clientId: 'c', expiresAt: now - 1000, revokedAt: now - 5000 })
    }
    await grants.store({
      handle: 'live', kind: 'refresh_token', clientId: 'c', subjectId: 's', familyId: 'f-live',
      data: {}, createdAt: now, expiresAt: now + 60_000,
    })
    await revocations.revoke({ jti: 'still-revoked', clientId: 'c', expiresAt: now + 60_000, revokedAt: now })
    const logged: unknown[] = []
    const cleanup = createCleanup({
      clock,
      batchSize: 2,
      logger: { info: (o: unknown) => void logged.push(o), warn: () => {} },
      tasks: [
        { name: 'persistedGrants', remove: grants.removeExpired },
        { name: 'revokedTokens', remove: revocations.removeExpired },
      ],
    })
    expect(await cleanup.runOnce()).toEqual({ persistedGrants: 5, revokedTokens: 5 })
    expect(logged).toEqual([{ removed: { persistedGrants: 5, revokedTokens: 5 } }])
    expect((await t.db.query('SELECT kind FROM persisted_grants')).rows).toEqual([{ kind: 'refresh_token' }])
    expect((await t.db.query('SELECT jti FROM revoked_tokens')).rows).toEqual([{ jti: 'still-revoked' }])
    expect(await cleanup.runOnce()).toEqual({ persistedGrants: 0, revokedTokens: 0 })
    clock.advance(61)
    expect(await cleanup.runOnce()).toEqual({ persistedGrants: 1, revokedTokens: 1 })
  })
})
