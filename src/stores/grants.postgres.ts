// persisted_grants: codes, refresh tokens, reference tokens, device codes and the jtis of JWT
// access tokens issued from a grant. Only handle hashes are stored (ARCHITECTURE.md "Data rules").
// Single use is one atomic statement. Issuing into a family and revoking it exclude each other
// through the family's row in grant_families (migrations/0010_grant_families.sql):
// - issueIntoFamily is ONE statement: an upsert of the family row that refuses a revoked family
//   (ON CONFLICT DO UPDATE … WHERE revoked_at IS NULL locks the row and re-checks its newest
//   version), and the insert of the tokens, which happens only when the upsert returned the row.
// - revokeFamily is one transaction: an upsert that marks the row revoked (and locks it), then
//   the DELETE of the family's tokens, a new statement whose snapshot is taken after the lock.
// Whichever locks the row second waits for the other to commit: an issuance after a revocation
// stores nothing; a revocation after an issuance deletes what it stored. Under PGlite (one
// connection, statements serialized) the same holds trivially.
import { createBatcher } from '../db/batcher.js'
import type { Db, Queryable } from '../db/db.js'
import type { GrantKind, PersistedGrant } from '../domain/types.js'
import type { FamilyGrant, GrantStore, NewGrant, RevokedFamily } from './grants.js'
import { deleteExpired, handleHash, ts } from './columns.postgres.js'
import { REVOCATIONS_CHANNEL, revocationPayload } from './revocations.postgres.js'

/** Times arrive as epoch milliseconds (float8): no timestamp parsing on the hot path. */
interface GrantRow {
  handle_hash: string
  kind: GrantKind
  client_id: string
  subject_id: string | null
  family_id: string
  data: Record<string, unknown> | string
  created_ms: number
  expires_ms: number | null
  consumed_ms: number | null
  redemption_hash: string | null
}

const ms = (column: string) => `floor(extract(epoch FROM ${column}) * 1000)::float8`
/** The one projection every read uses, mapped by toGrant. */
const COLUMNS = `handle_hash, kind, client_id, subject_id, family_id, data,
  ${ms('created_at')} AS created_ms, ${ms('expires_at')} AS expires_ms, ${ms('consumed_at')} AS consumed_ms, redemption_hash`

function toGrant(r: GrantRow): PersistedGrant {
  return {
    handleHash: r.handle_hash,
    kind: r.kind,
    clientId: r.client_id,
    subjectId: r.subject_id ?? undefined,
    familyId: r.family_id,
    data: typeof r.data === 'string' ? (JSON.parse(r.data) as Record<string, unknown>) : r.data,
    createdAt: r.created_ms,
    expiresAt: r.expires_ms ?? undefined,
    consumedAt: r.consumed_ms ?? undefined,
    ...(r.redemption_hash !== null ? { redemptionHash: r.redemption_hash } : {}),
  }
}

const optTs = (ms: number | undefined) => (ms === undefined ? null : ts(ms))

// One statement text whatever the batch size (arrays, not a VALUES list per row), so pg prepares
// it once per connection. unnest zips the arrays into rows.
const INSERT_MANY = `INSERT INTO persisted_grants (handle_hash, kind, client_id, subject_id, family_id, data, created_at, expires_at)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::timestamptz[], $8::timestamptz[])`
const FIND_MANY = `SELECT ${COLUMNS} FROM persisted_grants WHERE handle_hash = ANY($1::text[])`
// One statement, so one snapshot of both tables (see GrantStore.findJwtFamily).
const FIND_JWT_FAMILY = `SELECT
    (SELECT family_id FROM persisted_grants WHERE handle_hash = $1 AND kind = 'jwt_access_token') AS family_id,
    EXISTS (SELECT 1 FROM revoked_tokens WHERE jti = $2) AS revoked`
const CONSUME = `UPDATE persisted_grants SET consumed_at = $3, redemption_hash = $4
  WHERE handle_hash = $1 AND kind = $2 AND consumed_at IS NULL RETURNING ${COLUMNS}`

/** Inserts every grant in one autocommit statement: one WAL flush for the batch. */
async function insertMany(db: Db, grants: NewGrant[]): Promise<void> {
  const cols: unknown[][] = [[], [], [], [], [], [], [], []]
  for (const g of grants) {
    const row = [
      handleHash(g.handle),
      g.kind,
      g.clientId,
      g.subjectId ?? null,
      g.familyId,
      JSON.stringify(g.data),
      ts(g.createdAt),
      optTs(g.expiresAt),
    ]
    row.forEach((v, i) => cols[i]!.push(v))
  }
  await db.query(INSERT_MANY, cols, { name: 'grants_insert_many' })
}

/**
 * A batch commits together or not at all. When it fails (one duplicate handle, one bad row),
 * each grant is retried alone so every caller gets its own outcome, never another's error.
 */
async function storeBatch(db: Db, grants: NewGrant[]): Promise<Array<PromiseSettledResult<void>>> {
  try {
    await insertMany(db, grants)
    return grants.map(() => ({ status: 'fulfilled', value: undefined }))
  } catch (err) {
    if (grants.length === 1) return [{ status: 'rejected', reason: err }]
    return Promise.allSettled(grants.map((g) => insertMany(db, [g])))
  }
}

/** One indexed lookup for every handle asked for in this turn of the event loop. */
async function findBatch(db: Db, hashes: string[]): Promise<Array<PromiseSettledResult<PersistedGrant | undefined>>> {
  const { rows } = await db.query<GrantRow>(FIND_MANY, [[...new Set(hashes)]], { name: 'grants_find_many' })
  const byHash = new Map(rows.map((r) => [r.handle_hash, r]))
  // Each caller gets its own object, even when two asked for the same handle.
  return hashes.map((h) => {
    const row = byHash.get(h)
    return { status: 'fulfilled', value: row && toGrant(byHash.size < hashes.length ? structuredClone(row) : row) }
  })
}

/**
 * A revoked family's row outlives its tokens by this much at least, so that a request that
 * consumed its artefact before the revocation can never issue into it afterwards.
 */
export const REVOKED_FAMILY_RETENTION_MS = 24 * 3600_000

// Family expiry: null (a token that never expires) wins, otherwise the later of the two.
const ISSUE_INTO_FAMILY = `WITH family AS (
    INSERT INTO grant_families AS f (family_id, created_at, expires_at) VALUES ($8, $9, $10)
    ON CONFLICT (family_id) DO UPDATE
      SET expires_at = CASE WHEN f.expires_at IS NULL OR excluded.expires_at IS NULL THEN NULL
                            ELSE greatest(f.expires_at, excluded.expires_at) END
      WHERE f.revoked_at IS NULL
    RETURNING family_id)
  INSERT INTO persisted_grants (handle_hash, kind, client_id, subject_id, family_id, data, created_at, expires_at)
  SELECT g.handle_hash, g.kind, g.client_id, g.subject_id, family.family_id, g.data, g.created_at, g.expires_at
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::jsonb[], $6::timestamptz[], $7::timestamptz[])
         AS g(handle_hash, kind, client_id, subject_id, data, created_at, expires_at),
       family`

async function issueIntoFamily(db: Db, familyId: string, grants: FamilyGrant[], at: number): Promise<boolean> {
  if (grants.length === 0) throw new Error('issueIntoFamily needs at least one grant')
  const cols: unknown[][] = [[], [], [], [], [], [], []]
  for (const g of grants) {
    const row = [handleHash(g.handle), g.kind, g.clientId, g.subjectId ?? null, JSON.stringify(g.data), ts(g.createdAt), optTs(g.expiresAt)]
    row.forEach((v, i) => cols[i]!.push(v))
  }
  const expiresAt = grants.some((g) => g.expiresAt === undefined) ? undefined : Math.max(...grants.map((g) => g.expiresAt!))
  const { rowCount } = await db.query(ISSUE_INTO_FAMILY, [...cols, familyId, ts(at), optTs(expiresAt)], {
    name: 'grants_issue_into_family',
  })
  return rowCount === grants.length
}

/** Marks the family revoked, deletes its rows and records each live JWT access token's jti as revoked, telling every replica. */
async function revokeFamilyIn(tx: Queryable, familyId: string, at: number): Promise<RevokedFamily> {
  const keep = ts(at + REVOKED_FAMILY_RETENTION_MS)
  await tx.query(
    `INSERT INTO grant_families AS f (family_id, created_at, expires_at, revoked_at) VALUES ($1, $2, $3, $2)
     ON CONFLICT (family_id) DO UPDATE
       SET revoked_at = coalesce(f.revoked_at, excluded.revoked_at),
           expires_at = greatest(coalesce(f.expires_at, excluded.expires_at), excluded.expires_at)`,
    [familyId, ts(at), keep],
  )
  const { rows } = await tx.query<GrantRow>(`DELETE FROM persisted_grants WHERE family_id = $1 RETURNING ${COLUMNS}`, [familyId])
  const revoked = rows.map(toGrant).flatMap((r) => {
    const jti = r.kind === 'jwt_access_token' ? r.data.jti : undefined
    return typeof jti === 'string' && r.expiresAt !== undefined && r.expiresAt > at
      ? [{ jti, expiresAt: r.expiresAt, clientId: r.clientId }]
      : []
  })
  if (revoked.length > 0) {
    await tx.query(
      `INSERT INTO revoked_tokens (jti, client_id, expires_at, revoked_at)
       SELECT jti, client_id, expires_at, $4::timestamptz FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS r(jti, client_id, expires_at)
       ON CONFLICT (jti) DO NOTHING`,
      [revoked.map((r) => r.jti), revoked.map((r) => r.clientId), revoked.map((r) => ts(r.expiresAt)), ts(at)],
    )
    await tx.query('SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', [
      REVOCATIONS_CHANNEL,
      revoked.map((r) => revocationPayload(r.jti, r.expiresAt)),
    ])
  }
  return { removed: rows.length, revokedJtis: revoked.map(({ jti, expiresAt }) => ({ jti, expiresAt })) }
}

export interface PgGrantStoreOptions {
  /** Most grants per INSERT and most handles per lookup. */
  maxBatch?: number
  /**
   * INSERT batches running at once (4); while they run, new grants gather into the next batch.
   * A commit waits for a WAL flush (~4 ms on the bench machine): a few in parallel hide that latency.
   */
  maxStoresInFlight?: number
  /** Lookup batches running at once (2): reads are CPU-bound, so fewer, larger batches do better. */
  maxFindsInFlight?: number
}

/**
 * store() and find() calls made in the same turn of the event loop share one statement (see
 * db/batcher.ts): store() still resolves only once its own row is committed, and find() sees
 * everything committed before it was called. consume() is never batched: single use stays one
 * atomic UPDATE per redemption; nor is issueIntoFamily, whose one statement is its family's check.
 */
export function createPgGrantStore(db: Db, opts: PgGrantStoreOptions = {}): GrantStore {
  const maxBatch = opts.maxBatch ?? 100
  const stores = createBatcher<NewGrant, void>({
    maxBatch,
    maxInFlight: opts.maxStoresInFlight ?? 4,
    run: (grants) => storeBatch(db, grants),
  })
  const finds = createBatcher<string, PersistedGrant | undefined>({
    maxBatch,
    maxInFlight: opts.maxFindsInFlight ?? 2,
    run: (hashes) => findBatch(db, hashes),
  })
  return {
    store: (g) => stores.add(g),
    async find(handle, kind) {
      const g = await finds.add(handleHash(handle))
      return g && (kind === undefined || g.kind === kind) ? g : undefined
    },
    async consume(handle, kind, at, redemptionHash) {
      const { rows } = await db.query<GrantRow>(CONSUME, [handleHash(handle), kind, ts(at), redemptionHash ?? null], {
        name: 'grants_consume',
      })
      return rows[0] && toGrant(rows[0])
    },
    async findJwtFamily(jti) {
      const { rows } = await db.query<{ family_id: string | null; revoked: boolean }>(FIND_JWT_FAMILY, [handleHash(jti), jti], {
        name: 'grants_find_jwt_family',
      })
      return { familyId: rows[0]?.family_id ?? undefined, revoked: rows[0]?.revoked === true }
    },
    async remove(handle, kind, clientId) {
      const { rowCount } = await db.query('DELETE FROM persisted_grants WHERE handle_hash = $1 AND kind = $2 AND client_id = $3', [
        handleHash(handle),
        kind,
        clientId,
      ])
      return rowCount > 0
    },
    issueIntoFamily: (familyId, grants, at) => issueIntoFamily(db, familyId, grants, at),
    revokeFamily(familyId, at) {
      return db.transaction((tx) => revokeFamilyIn(tx, familyId, at))
    },
    async familiesOf(subjectId, clientId) {
      // persisted_grants_subject_idx (subject_id, client_id) serves it.
      const { rows } = await db.query<{ family_id: string }>(
        'SELECT DISTINCT family_id FROM persisted_grants WHERE subject_id = $1 AND client_id = $2 ORDER BY family_id',
        [subjectId, clientId],
      )
      return rows.map((r) => r.family_id)
    },
    async clientsHolding(subjectId, now) {
      const { rows } = await db.query<{ client_id: string; since: number }>(
        `SELECT client_id, ${ms('min(created_at)')} AS since FROM persisted_grants
          WHERE subject_id = $1 AND kind IN ('refresh_token', 'reference_token', 'jwt_access_token')
            AND (expires_at IS NULL OR expires_at > $2::timestamptz)
          GROUP BY client_id ORDER BY client_id COLLATE "C"`,
        [subjectId, ts(now)],
      )
      return rows.map((r) => ({ clientId: r.client_id, since: r.since }))
    },
    removeExpired: (before, limit) => deleteExpired(db, 'persisted_grants', 'handle_hash', before, limit),
    removeExpiredFamilies: (before, limit) => deleteExpired(db, 'grant_families', 'family_id', before, limit),
  }
}
