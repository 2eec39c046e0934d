// Grant families in the grant store: issuing into a family and revoking it exclude each other
// (migrations/0010_grant_families.sql). Whatever grant issues (refresh, CIBA, authorization and
// device codes), its tokens go through issueIntoFamily, so this is the property they all rest on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPgGrantStore, REVOKED_FAMILY_RETENTION_MS } from '../../src/stores/grants.postgres.js'
import type { FamilyGrant } from '../../src/stores/grants.js'
import { createTestDb, type TestDb } from '../helpers/db.js'

let authz: TestDb
beforeAll(async () => {
  authz = await createTestDb()
})
afterAll(() => authz.close())

const T0 = Date.UTC(2026, 0, 1)
const HOUR = 3600_000
const jwtRow = (jti: string, expiresAt = T0 + HOUR): FamilyGrant => ({
  handle: jti,
  kind: 'jwt_access_token',
  clientId: 'c1',
  subjectId: 'u1',
  data: { jti },
  createdAt: T0,
  expiresAt,
})
const refreshRow = (handle: string, expiresAt = T0 + 24 * HOUR): FamilyGrant => ({
  handle,
  kind: 'refresh_token',
  clientId: 'c1',
  subjectId: 'u1',
  data: {},
  createdAt: T0,
  expiresAt,
})

async function family(id: string) {
  const { rows } = await authz.db.query<{ expires_ms: number | null; revoked_ms: number | null }>(
    `SELECT (extract(epoch FROM expires_at) * 1000)::float8 AS expires_ms, (extract(epoch FROM revoked_at) * 1000)::float8 AS revoked_ms
     FROM grant_families WHERE family_id = $1`,
    [id],
  )
  return rows[0] && { expiresAt: rows[0].expires_ms, revokedAt: rows[0].revoked_ms }
}
const familyRows = async (id: string) =>
  (await authz.db.query<{ kind: string }>('SELECT kind FROM persisted_grants WHERE family_id = $1 ORDER BY kind', [id])).rows.map(
    (r) => r.kind,
  )
const revokedJti = async (jti: string) => (await authz.db.query('SELECT 1 FROM revoked_tokens WHERE jti = $1', [jti])).rows.length === 1

describe('GrantStore families (postgres)', () => {
  it('issues every token of a response into the family in one go and creates the family', async () => {
    const store = createPgGrantStore(authz.db)
    expect(await store.issueIntoFamily('f-new', [jwtRow('j-new'), refreshRow('r-new')], T0)).toBe(true)
    expect(await familyRows('f-new')).toEqual(['jwt_access_token', 'refresh_token'])
    expect((await store.find('r-new'))?.familyId).toBe('f-new')
    expect(await family('f-new')).toEqual({ expiresAt: T0 + 24 * HOUR, revokedAt: null })
    // A later issuance (a rotation) extends the family to its latest token.
    expect(await store.issueIntoFamily('f-new', [refreshRow('r-new-2', T0 + 48 * HOUR)], T0 + HOUR)).toBe(true)
    expect(await family('f-new')).toEqual({ expiresAt: T0 + 48 * HOUR, revokedAt: null })
    // A token that never expires keeps the family forever.
    expect(await store.issueIntoFamily('f-new', [{ ...refreshRow('r-new-3'), expiresAt: undefined }], T0 + HOUR)).toBe(true)
    expect(await store.issueIntoFamily('f-new', [jwtRow('j-new-2')], T0 + HOUR)).toBe(true)
    expect(await family('f-new')).toEqual({ expiresAt: null, revokedAt: null })
  })

  it("finds a JWT access token's family by jti, and once the family is revoked says so rather than 'no family'", async () => {
    const store = createPgGrantStore(authz.db)
    expect(await store.issueIntoFamily('f-jwt', [jwtRow('j-fam'), refreshRow('r-fam')], T0)).toBe(true)
    expect(await store.findJwtFamily('j-fam')).toEqual({ familyId: 'f-jwt', revoked: false })
    // A JWT of no family (client_credentials) has no row and no revocation.
    expect(await store.findJwtFamily('j-none')).toEqual({ familyId: undefined, revoked: false })
    // The refresh token's handle is no jti.
    expect(await store.findJwtFamily('r-fam')).toEqual({ familyId: undefined, revoked: false })
    await store.revokeFamily('f-jwt', T0 + 1000)
    expect(await store.findJwtFamily('j-fam')).toEqual({ familyId: undefined, revoked: true })
  })

  it('refuses to issue into a revoked family and stores nothing', async () => {
    const store = createPgGrantStore(authz.db)
    expect(await store.issueIntoFamily('f-rev', [jwtRow('j-rev-1'), refreshRow('r-rev-1')], T0)).toBe(true)
    expect(await store.revokeFamily('f-rev', T0 + 1000)).toEqual({ removed: 2, revokedJtis: [{ jti: 'j-rev-1', expiresAt: T0 + HOUR }] })
    expect(await store.issueIntoFamily('f-rev', [jwtRow('j-rev-2'), refreshRow('r-rev-2')], T0 + 2000)).toBe(false)
    expect(await familyRows('f-rev')).toEqual([])
    expect(await store.find('r-rev-2')).toBeUndefined()
    // Kept a day past the revocation at least (here: past its last token too).
    expect(await family('f-rev')).toEqual({ expiresAt: T0 + 1000 + REVOKED_FAMILY_RETENTION_MS, revokedAt: T0 + 1000 })
  })

  it('a revocation that comes before the first issuance still wins', async () => {
    const store = createPgGrantStore(authz.db)
    expect(await store.revokeFamily('f-early', T0)).toEqual({ removed: 0, revokedJtis: [] })
    expect(await store.issueIntoFamily('f-early', [jwtRow('j-early')], T0)).toBe(false)
    expect(await family('f-early')).toEqual({ expiresAt: T0 + REVOKED_FAMILY_RETENTION_MS, revokedAt: T0 })
    // Revoking again keeps the first revocation time.
    await store.revokeFamily('f-early', T0 + 5000)
    expect((await family('f-early'))?.revokedAt).toBe(T0)
  })

  it('families without a row (issued before families had one) are revoked as before', async () => {
    const store = createPgGrantStore(authz.db)
    await store.store({ ...refreshRow('r-old'), familyId: 'f-old' })
    expect(await family('f-old')).toBeUndefined()
    expect(await store.issueIntoFamily('f-old', [jwtRow('j-old')], T0)).toBe(true)
    expect((await store.revokeFamily('f-old', T0)).removed).toBe(2)
    expect(await revokedJti('j-old')).toBe(true)
  })

  it('removeExpiredFamilies removes only families past their expiry, bounded by limit', async () => {
    const store = createPgGrantStore(authz.db)
    await store.issueIntoFamily('f-x1', [jwtRow('j-x1', T0 - 2)], T0 - HOUR)
    await store.issueIntoFamily('f-x2', [jwtRow('j-x2', T0 - 1)], T0 - HOUR)
    await store.issueIntoFamily('f-live', [jwtRow('j-live', T0 + 10)], T0 - HOUR)
    expect(await store.removeExpiredFamilies(T0, 1)).toBe(1)
    expect(await store.removeExpiredFamilies(T0, 10)).toBe(1)
    expect(await family('f-x1')).toBeUndefined()
    expect(await family('f-live')).toBeDefined()
    expect(await family('f-new')).toBeDefined() // never expires
  })

  it('issuing and revoking at the same time: whatever was issued is revoked, 50 trials', async () => {
    const store = createPgGrantStore(authz.db)
    const survivors: string[] = []
    for (let trial = 0; trial < 50; trial++) {
      const f = `f-race-${trial}`
      // Three issuers (a winner and two reUse-style refreshes) race one revocation.
      const issues = [0, 1, 2].map((i) => store.issueIntoFamily(f, [jwtRow(`j-${trial}-${i}`), refreshRow(`r-${trial}-${i}`)], T0))
      const revoked = new Promise((r) => setTimeout(r, trial % 3)).then(() => store.revokeFamily(f, T0))
      const [results, { revokedJtis }] = await Promise.all([Promise.all(issues), revoked])
      if ((await familyRows(f)).length > 0) survivors.push(`trial ${trial}: rows left`)
      for (const [i, ok] of results.entries()) {
        const jti = `j-${trial}-${i}`
        if (!ok) continue
        if (!(await revokedJti(jti))) survivors.push(`trial ${trial}: ${jti} not revoked`)
        if (!revokedJtis.some((r) => r.jti === jti)) survivors.push(`trial ${trial}: ${jti} not reported`)
      }
    }
    expect(survivors).toEqual([])
  }, 120_000)
})
