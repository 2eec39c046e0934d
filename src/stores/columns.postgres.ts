// Mapping helpers shared by the Postgres stores: protocol times go in as ISO strings built from
// the injected clock's milliseconds, and secrets come out folded into their owner's row.
import { createHash } from 'node:crypto'
import type { Queryable } from '../db/db.js'
import type { Secret } from '../domain/types.js'

/** base64url(SHA-256(value)): the key under which a handle (token, code, session id) is
 * stored: a database dump yields no usable handle. */
export function handleHash(value: string): string {
  return createHash('sha256').update(value).digest('base64url')
}

/** A time parameter (ms since the epoch) for a timestamptz column. */
export const ts = (ms: number) => new Date(ms).toISOString()

export interface SecretJson {
  value_hash: string
  expires_at_ms: number | null
  description: string | null
  /** client_secrets only: the secret kept for client_secret_jwt (migration 0035). */
  sealed_value?: string | null
  sealed_encrypted?: boolean
}

/**
 * A subquery folding the owner's secrets into one JSON array, expiry as epoch milliseconds
 * computed in SQL (JSON numbers, no time-zone parsing in JS). One round trip per owner.
 */
export function secretsJsonAgg(table: 'client_secrets' | 'api_resource_secrets', ownerColumn: string, ownerRef: string): string {
  const sealed = table === 'client_secrets' ? `,\n        'sealed_value', s.sealed_value, 'sealed_encrypted', s.sealed_encrypted` : ''
  return `(SELECT json_agg(json_build_object(
        'value_hash', s.value_hash,
        'expires_at_ms', (extract(epoch FROM s.expires_at) * 1000)::bigint,
        'description', s.description${sealed}) ORDER BY s.id)
     FROM ${table} s WHERE s.${ownerColumn} = ${ownerRef})`
}

export function toSecret(s: SecretJson): Secret {
  return {
    valueHash: s.value_hash,
    expiresAt: s.expires_at_ms === null ? undefined : Number(s.expires_at_ms),
    description: s.description ?? undefined,
    ...(s.sealed_value ? { sealed: { value: s.sealed_value, encrypted: s.sealed_encrypted === true } } : {}),
  }
}

/** A timestamptz read back (pg: Date; PGlite: Date or ISO string) as ms since the epoch. */
export const toMs = (v: Date | string) => new Date(v).getTime()

/**
 * Deletes at most `limit` rows of `table` that expired before `before` (ms), oldest first, by the
 * expires_at index: short statements, never a long table lock. Returns how many were deleted.
 * `key` lists the table's primary-key columns, comma-separated.
 */
export async function deleteExpired(db: Queryable, table: string, key: string, before: number, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM ${table} WHERE (${key}) IN (
       SELECT ${key} FROM ${table} WHERE expires_at < $1::timestamptz ORDER BY expires_at LIMIT $2)`,
    [ts(before), limit],
  )
  return rowCount
}
