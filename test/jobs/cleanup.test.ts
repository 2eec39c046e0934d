// Expired state is removed in batches that adapt to the database's speed, as many as the backlog
// needs, and nothing that is still valid.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createManualClock } from '../../src/domain/clock.js'
import { createCleanup, type CleanupTask } from '../../src/jobs/cleanup.js'
import { createPgGrantStore } from '../../src/stores/grants.postgres.js'
import { createPgRevocationStore } from '../../src/stores/revocations.postgres.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let authz: TestDb
beforeAll(async () => {
  authz = await createTestDb()
})
afterAll(() => authz.close())

describe('cleanup', () => {
  it('removes expired grants and revocations in batches, keeps the rest, and reports the counts', async () => {
    const clock = createManualClock()
    const now = clock.now()
    const grants = createPgGrantStore(authz.db)
    const revocations = createPgRevocationStore(authz.db)
    for (let i = 0; i < 5; i++) {
      await grants.store({
        handle: `expired-${i}`,
        kind: 'reference_token',
        clientId: 'c',
        subjectId: undefined,
        familyId: `f${i}`,
        data: {},
        createdAt: now - 7200_000,
        expiresAt: now - 1000,
      })
      await revocations.revoke({ jti: `gone-${i}`, clientId: 'c', expiresAt: now - 1000, revokedAt: now - 5000 })
    }
    await grants.store({
      handle: 'live',
      kind: 'refresh_token',
      clientId: 'c',
      subjectId: 's',
      familyId: 'f-live',
      data: {},
      createdAt: now,
      expiresAt: now + 60_000,
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
    expect((await authz.db.query('SELECT kind FROM persisted_grants')).rows).toEqual([{ kind: 'refresh_token' }])
    expect((await authz.db.query('SELECT jti FROM revoked_tokens')).rows).toEqual([{ jti: 'still-revoked' }])
    expect(await cleanup.runOnce()).toEqual({ persistedGrants: 0, revokedTokens: 0 })
    clock.advance(61)
    expect(await cleanup.runOnce()).toEqual({ persistedGrants: 1, revokedTokens: 1 })
  })
})

/** `count` expired reference tokens, as many as a busy replica issues in a minute or so. */
async function insertExpired(db: TestDb['db'], tag: string, count: number, expiredAt: number) {
  await db.query(
    `INSERT INTO persisted_grants (handle_hash, kind, client_id, family_id, data, created_at, expires_at)
     SELECT 'h-' || $1 || '-' || g, 'reference_token', 'c', 'f-' || $1 || '-' || g, '{"scope":"orders.read"}', $2::timestamptz, $2::timestamptz
     FROM generate_series(1, $3::int) g`,
    [tag, new Date(expiredAt).toISOString(), count],
  )
}

describe('cleanup under sustained issuance', () => {
  it('removes each minute everything that expired in it, far beyond 10,000 rows a minute', { timeout: 60_000 }, async () => {
    const clock = createManualClock()
    const grants = createPgGrantStore(authz.db)
    await grants.store({
      handle: 'live-2',
      kind: 'refresh_token',
      clientId: 'c',
      subjectId: 's',
      familyId: 'f-live-2',
      data: {},
      createdAt: clock.now(),
      expiresAt: clock.now() + 3600_000,
    })
    const cleanup = createCleanup({
      clock,
      logger: { info: () => {}, warn: () => {} },
      tasks: [{ name: 'persistedGrants', remove: grants.removeExpired }],
    })
    const backlog = async () =>
      Number(
        (
          await authz.db.query<{ n: string }>('SELECT count(*) AS n FROM persisted_grants WHERE expires_at < $1', [
            new Date(clock.now()).toISOString(),
          ])
        ).rows[0]!.n,
      )
    // 25,000 tokens a minute (about 420 a second) expire for three minutes; cleanup runs once a minute.
    for (let minute = 0; minute < 3; minute++) {
      await insertExpired(authz.db, `m${minute}`, 25_000, clock.now() - 1000)
      expect(await cleanup.runOnce()).toEqual({ persistedGrants: 25_000 })
      expect(await backlog()).toBe(0)
      clock.advance(60)
    }
    expect(
      (await authz.db.query('SELECT handle_hash FROM persisted_grants WHERE expires_at > $1', [new Date(clock.now()).toISOString()]))
        .rowCount,
    ).toBe(1)
  })
})

describe('adaptive batches', () => {
  /** A table of `rows` expired rows that deletes `perMs` rows per millisecond of a fake clock. */
  function fakeTable(rows: number, perMs: number, time: { ms: number }) {
    const sizes: number[] = []
    const task: CleanupTask = {
      name: 'fake',
      async remove(_before, limit) {
        sizes.push(limit)
        const n = Math.min(rows, limit)
        rows -= n
        time.ms += 2 + n / perMs
        return n
      },
    }
    return { task, sizes, left: () => rows }
  }
  const quiet = { info: () => {}, warn: () => {} }

  it('grows the batch on a fast database, so a large backlog takes few statements', async () => {
    const time = { ms: 0 }
    const table = fakeTable(100_000, 200, time)
    const cleanup = createCleanup({ clock: createManualClock(), logger: quiet, tasks: [table.task], elapsed: () => time.ms })
    expect(await cleanup.run()).toEqual({ removed: { fake: 100_000 }, backlog: [] })
    expect(table.sizes.slice(0, 6)).toEqual([1000, 2000, 4000, 8000, 16_000, 20_000])
    expect(table.sizes.length).toBeLessThan(12)
  })

  it('shrinks the batch on a slow database, keeping each statement short', async () => {
    const time = { ms: 0 }
    const table = fakeTable(5000, 1, time) // 1,000 rows take a second
    const cleanup = createCleanup({ clock: createManualClock(), logger: quiet, tasks: [table.task], elapsed: () => time.ms })
    await cleanup.run()
    // Halved while a statement takes over twice the 200 ms target, then kept.
    expect(table.sizes.slice(0, 4)).toEqual([1000, 500, 250, 250])
    expect(Math.max(...table.sizes.slice(2))).toBe(250)
    expect(table.left()).toBe(0)
  })

  it('stops at the run budget and reports the backlog; the next run continues', async () => {
    const time = { ms: 0 }
    const table = fakeTable(50_000, 1, time)
    const cleanup = createCleanup({
      clock: createManualClock(),
      logger: quiet,
      tasks: [table.task],
      elapsed: () => time.ms,
      runBudgetMs: 3000,
    })
    const first = await cleanup.run()
    expect(first.backlog).toEqual(['fake'])
    expect(first.removed.fake).toBeLessThan(5000)
    const second = await cleanup.run()
    expect(second.backlog).toEqual(['fake'])
    expect(second.removed.fake).toBeGreaterThan(0)
    expect(table.left()).toBe(50_000 - first.removed.fake! - second.removed.fake!)
  })
})
