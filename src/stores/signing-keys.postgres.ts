// Signing keys shared by every replica. Creation and rotation run in one
// transaction under a transaction-scoped advisory lock, so replicas starting together create
// each key once. Times go in and out as epoch milliseconds (the caller's Clock), never now().
import type { SigningAlg } from '../config.js'
import type { Db, Queryable } from '../db/db.js'
import { purgeDeadRowVersions } from './dead-rows.postgres.js'
import type { SigningKeyStore, SigningKeyWriter, StoredSigningKey } from './signing-keys.js'

/** Fixed key for pg_advisory_xact_lock, distinct from the migration runner's: "authk" in ASCII. */
const LOCK_KEY = 0x617574686b

interface SigningKeyRow {
  kid: string
  alg: SigningAlg
  public_jwk: Record<string, unknown>
  private_jwk: string | null
  encrypted: boolean
  created_at_ms: number
  activate_at_ms: number
  retire_at_ms: number | null
}

const SELECT = `SELECT kid, alg, public_jwk, private_jwk, encrypted,
    (extract(epoch FROM created_at) * 1000)::float8 AS created_at_ms,
    (extract(epoch FROM activate_at) * 1000)::float8 AS activate_at_ms,
    (extract(epoch FROM retire_at) * 1000)::float8 AS retire_at_ms
  FROM signing_keys`

function toKey(r: SigningKeyRow): StoredSigningKey {
  return {
    kid: r.kid,
    alg: r.alg,
    publicJwk: typeof r.public_jwk === 'string' ? (JSON.parse(r.public_jwk) as Record<string, unknown>) : r.public_jwk,
    privateJwk: r.private_jwk ?? undefined,
    encrypted: r.encrypted,
    createdAt: Math.round(Number(r.created_at_ms)),
    activateAt: Math.round(Number(r.activate_at_ms)),
    retireAt: r.retire_at_ms === null ? undefined : Math.round(Number(r.retire_at_ms)),
  }
}

function writer(tx: Queryable): SigningKeyWriter {
  return {
    async unretiredAlgs() {
      const { rows } = await tx.query<{ alg: SigningAlg }>('SELECT DISTINCT alg FROM signing_keys WHERE retire_at IS NULL')
      return rows.map((r) => r.alg)
    },
    async insert(k) {
      await tx.query(
        `INSERT INTO signing_keys (kid, alg, use, public_jwk, private_jwk, encrypted, created_at, activate_at, retire_at)
         VALUES ($1, $2, 'sig', $3::jsonb, $4, $5, to_timestamp($6::float8 / 1000), to_timestamp($7::float8 / 1000),
                 to_timestamp($8::float8 / 1000))`,
        [k.kid, k.alg, JSON.stringify(k.publicJwk), k.privateJwk ?? null, k.encrypted, k.createdAt, k.activateAt, k.retireAt ?? null],
      )
    },
    async retireOthers(alg, keepKid, retireAt) {
      const { rowCount } = await tx.query(
        `UPDATE signing_keys SET retire_at = to_timestamp($3::float8 / 1000)
         WHERE alg = $1 AND kid <> $2 AND retire_at IS NULL`,
        [alg, keepKid, retireAt],
      )
      return rowCount
    },
    async maxClientAccessTokenLifetime() {
      const { rows } = await tx.query<{ m: number | null }>('SELECT max(access_token_lifetime) AS m FROM clients')
      const m = rows[0]?.m
      return m === null || m === undefined ? undefined : Number(m)
    },
    async list() {
      const { rows } = await tx.query<SigningKeyRow>(`${SELECT} ORDER BY activate_at, kid`)
      return rows.map(toKey)
    },
    async storeEncrypted(kid, encryptedJwk) {
      await tx.query('UPDATE signing_keys SET private_jwk = $2, encrypted = true WHERE kid = $1 AND NOT encrypted', [kid, encryptedJwk])
    },
  }
}

export function createPgSigningKeyStore(db: Db): SigningKeyStore {
  return {
    async list(publishedAt) {
      const { rows } =
        publishedAt === undefined
          ? await db.query<SigningKeyRow>(`${SELECT} ORDER BY activate_at, kid`)
          : await db.query<SigningKeyRow>(
              `${SELECT} WHERE retire_at IS NULL OR retire_at > to_timestamp($1::float8 / 1000) ORDER BY activate_at, kid`,
              [publishedAt],
            )
      return rows.map(toKey)
    },
    locked(fn) {
      return db.transaction(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY])
        return fn(writer(tx))
      })
    },
    async removeRetired(before, limit) {
      const { rows } = await db.query<{ kid: string }>(
        `DELETE FROM signing_keys WHERE kid IN (
           SELECT kid FROM signing_keys WHERE retire_at <= to_timestamp($1::float8 / 1000) ORDER BY retire_at LIMIT $2)
         RETURNING kid`,
        [before, limit],
      )
      return rows.map((r) => r.kid)
    },
    async erasePrivateParts(at) {
      const { rows } = await db.query<{ kid: string }>(
        `UPDATE signing_keys k SET private_jwk = NULL
         WHERE k.private_jwk IS NOT NULL AND EXISTS (
           SELECT 1 FROM signing_keys n
           WHERE n.alg = k.alg AND n.activate_at <= to_timestamp($1::float8 / 1000)
             AND (n.activate_at, n.created_at) > (k.activate_at, k.created_at))
         RETURNING k.kid`,
        [at],
      )
      return rows.map((r) => r.kid).sort()
    },
    purgeDeadRowVersions: () => purgeDeadRowVersions(db, 'signing_keys'),
  }
}
