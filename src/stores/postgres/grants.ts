// persisted_grants: codes, refresh tokens, reference tokens, device codes and the jtis of JWT
// access tokens issued from a grant. Only handle hashes are stored (DESIGN.md data rules).
// Single use and family revocation are each one atomic SQL statement / transaction.
import { createBatcher } from '../../db/batcher.js'
import type { Db, Queryable } from '../../db/db.js'
import type { GrantKind, PersistedGrant } from '../../domain/types.js'
import type { GrantStore, NewGrant } from '../types.js'
import { deleteExpired, handleHash, ts } from './columns.js'
import { REVOCATIONS_CHANNEL, revocationPayload } from './revocations.js'

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
}

const ms = (column: string) => `floor(extract(epoch FROM ${column}) * 1000)::float8`
/** The one projection every read uses, mapped by toGrant. */
const COLUMNS = `handle_hash, kind, client_id, subject_id, family_id, data,
  ${ms('created_at')} AS created_ms, ${ms('expires_at')} AS expires_ms, ${ms('consumed_at')} AS consumed_ms`

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
  }
}

const optTs = (ms: number | undefined) => (ms === undefined ? null : ts(ms))

// One statement text whatever the batch size (arrays, not a VALUES list per row), so pg prepares
// it once per connection. unnest zips the arrays into rows.
const INSERT_MANY = `INSERT INTO persisted_grants (handle_hash, kind, client_id, subject_id, family_id, data, created_at, expires_at)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::timestamptz[], $8::timestamptz[])`
const FIND_MANY = `SELECT ${COLUMNS} FROM persisted_grants WHERE handle_hash = ANY($1::text[])`
const CONSUME = `UPDATE persisted_grants SET consumed_at = $3
  WHERE handle_hash = $1 AND kind = $2 AND consumed_at IS NULL RETURNING ${COLUMNS}`

/** Inserts every grant in one autocommit statement: one WAL flush for the batch. */
async function insertMany(db: Db, grants: NewGrant[]): Promise<void> {
  const cols: unknown[][] = [[], [], [], [], [], [], [], []]
  for (const g of grants) {
    const row = [handleHash(g.handle), g.kind, g.clientId, g.subjectId ?? null, g.familyId, JSON.stringify(g.data), ts(g.createdAt), optTs(g.expiresAt)]
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

/** Deletes a family's rows and records each JWT access token's jti as revoked, telling every replica. */
async function revokeFamilyIn(tx: Queryable, familyId: string, at: number): Promise<number> {
  const { rows } = await tx.query<GrantRow>(`DELETE FROM persisted_grants WHERE family_id = $1 RETURNING ${COLUMNS}`, [familyId])
  for (const r of rows.map(toGrant)) {
    const jti = r.kind === 'jwt_access_token' ? r.data.jti : undefined
    if (typeof jti !== 'string' || r.expiresAt === undefined || r.expiresAt <= at) continue
    await tx.query(
      `INSERT INTO revoked_tokens (jti, client_id, expires_at, revoked_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (jti) DO NOTHING`,
      [jti, r.clientId, ts(r.expiresAt), ts(at)],
    )
    await tx.query('SELECT pg_notify($1, $2)', [REVOCATIONS_CHANNEL, revocationPayload(jti, r.expiresAt)])
  }
  return rows.length
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
 * atomic UPDATE per redemption.
 */
export function createPgGrantStore(db: Db, opts: PgGrantStoreOptions = {}): GrantStore {
  const maxBatch = opts.maxBatch ?? 100
  const stores = createBatcher<NewGrant, void>({
    maxBatch, maxInFlight: opts.maxStoresInFlight ?? 4, run: (grants) => storeBatch(db, grants),
  })
  const finds = createBatcher<string, PersistedGrant | undefined>({
    maxBatch, maxInFlight: opts.maxFindsInFlight ?? 2, run: (hashes) => findBatch(db, hashes),
  })
  return {
    store: (g) => stores.add(g),
    async find(handle, kind) {
      const g = await finds.add(handleHash(handle))
      return g && (kind === undefined || g.kind === kind) ? g : undefined
    },
    async consume(handle, kind, at) {
      const { rows } = await db.query<GrantRow>(CONSUME, [handleHash(handle), kind, ts(at)], { name: 'grants_consume' })
      return rows[0] && toGrant(rows[0])
    },
    async remove(handle, kind, clientId) {
      const { rowCount } = await db.query(
        'DELETE FROM persisted_grants WHERE handle_hash = $1 AND kind = $2 AND client_id = $3',
        [handleHash(handle), kind, clientId],
      )
      return rowCount > 0
    },
    revokeFamily(familyId, at) {
      return db.transaction((tx) => revokeFamilyIn(tx, familyId, at))
    },
    removeExpired: (before, limit) => deleteExpired(db, 'persisted_grants', 'handle_hash', before, limit),
  }
}
