// revoked_tokens: JWT access tokens revoked by jti (RFC 7009), kept until the token's own expiry.
// The insert and a NOTIFY on REVOCATIONS_CHANNEL share one transaction, so every replica's
// in-memory revocation list (src/tokens/revocation-list.ts, through subscribe) learns of it once
// it is committed.
import type { Db } from '../db/db.js'
import type { RevocationStore } from './revocations.js'
import { deleteExpired, toMs, ts } from './columns.postgres.js'

export const REVOCATIONS_CHANNEL = 'authz_revocations'

/** NOTIFY payload: "<expiresAt ms> <jti>" (a jti may contain spaces; the number cannot). */
export function revocationPayload(jti: string, expiresAt: number): string {
  return `${expiresAt} ${jti}`
}

export function parseRevocationPayload(payload: string): { jti: string; expiresAt: number } | undefined {
  const sp = payload.indexOf(' ')
  const expiresAt = Number(payload.slice(0, sp))
  if (sp < 1 || !Number.isFinite(expiresAt)) return undefined
  return { jti: payload.slice(sp + 1), expiresAt }
}

export function createPgRevocationStore(db: Db): RevocationStore {
  return {
    async revoke(e) {
      await db.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO revoked_tokens (jti, client_id, expires_at, revoked_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (jti) DO NOTHING`,
          [e.jti, e.clientId, ts(e.expiresAt), ts(e.revokedAt)],
        )
        await tx.query('SELECT pg_notify($1, $2)', [REVOCATIONS_CHANNEL, revocationPayload(e.jti, e.expiresAt)])
      })
    },
    async listActive(now) {
      const { rows } = await db.query<{ jti: string; expires_at: Date }>(
        'SELECT jti, expires_at FROM revoked_tokens WHERE expires_at > $1',
        [ts(now)],
      )
      return rows.map((r) => ({ jti: r.jti, expiresAt: toMs(r.expires_at) }))
    },
    subscribe(onRevoked) {
      return db.listen(REVOCATIONS_CHANNEL, (payload) => {
        if (payload === undefined) return onRevoked(undefined)
        const e = parseRevocationPayload(payload)
        if (e) onRevoked(e)
      })
    },
    removeExpired: (before, limit) => deleteExpired(db, 'revoked_tokens', 'jti', before, limit),
  }
}
