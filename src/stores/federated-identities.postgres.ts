// Links between local users and upstream identities (federated_identities) and the sign-ins sent
// upstream and not yet back (federation_requests), migrations/0030. A state and its browser
// binding are stored only as SHA-256 hashes; consuming a request is one UPDATE … RETURNING.
import type { Queryable } from '../db/db.js'
import type { User } from '../domain/types.js'
import { deleteExpired, handleHash, toMs, ts } from './columns.postgres.js'
import type { FederatedIdentity, FederatedIdentityStore, FederationRequest } from './federated-identities.js'

interface LinkRow {
  scheme: string
  upstream_sub: string
  subject_id: string
  manages_claims: boolean
  created_at: Date | string
  last_sign_in_at: Date | string
}

interface RequestRow {
  scheme: string
  nonce: string
  code_verifier: string
  return_to: string | null
  created_at: Date | string
  expires_at: Date | string
}

interface UserRow {
  subject_id: string
  username: string
  password_hash: string | null
  enabled: boolean
  claims: Record<string, unknown>
  ciba_user_code_hash: string | null
}

const toLink = (r: LinkRow): FederatedIdentity => ({
  scheme: r.scheme,
  upstreamSub: r.upstream_sub,
  subjectId: r.subject_id,
  managesClaims: r.manages_claims,
  createdAt: toMs(r.created_at),
  lastSignInAt: toMs(r.last_sign_in_at),
})

const toUser = (r: UserRow): User => ({
  subjectId: r.subject_id,
  username: r.username,
  passwordHash: r.password_hash ?? undefined,
  enabled: r.enabled,
  claims: r.claims ?? {},
  cibaUserCodeHash: r.ciba_user_code_hash ?? undefined,
})

const toRequest = (r: RequestRow): FederationRequest => ({
  scheme: r.scheme,
  nonce: r.nonce,
  codeVerifier: r.code_verifier,
  returnTo: r.return_to ?? undefined,
  createdAt: toMs(r.created_at),
  expiresAt: toMs(r.expires_at),
})

const USER_COLUMNS = 'u.subject_id, u.username, u.password_hash, u.enabled, u.claims, u.ciba_user_code_hash'

export function createPgFederatedIdentityStore(db: Queryable): FederatedIdentityStore {
  return {
    async find(scheme, upstreamSub) {
      const { rows } = await db.query<LinkRow & UserRow>(
        `SELECT f.scheme, f.upstream_sub, f.manages_claims, f.created_at, f.last_sign_in_at, ${USER_COLUMNS}
           FROM federated_identities f JOIN users u ON u.subject_id = f.subject_id
          WHERE f.scheme = $1 AND f.upstream_sub = $2`,
        [scheme, upstreamSub],
      )
      return rows[0] && { link: toLink(rows[0]), user: toUser(rows[0]) }
    },
    async createLinkedUser(user, link) {
      // One statement: a user is never left without its link, nor a link without its user.
      const { rows } = await db.query(
        `WITH created AS (
           INSERT INTO users (subject_id, username, password_hash, enabled, claims)
           SELECT $1, $2, NULL, $3, $4::jsonb
            WHERE NOT EXISTS (SELECT 1 FROM federated_identities WHERE scheme = $5 AND upstream_sub = $6)
           ON CONFLICT DO NOTHING
           RETURNING subject_id)
         INSERT INTO federated_identities (scheme, upstream_sub, subject_id, manages_claims, created_at, last_sign_in_at)
         SELECT $5, $6, subject_id, true, $7::timestamptz, $7::timestamptz FROM created
         ON CONFLICT DO NOTHING
         RETURNING subject_id`,
        [user.subjectId, user.username, user.enabled, JSON.stringify(user.claims), link.scheme, link.upstreamSub, ts(link.at)],
      )
      return rows.length === 1
    },
    async link(subjectId, link) {
      const { rowCount } = await db.query(
        `INSERT INTO federated_identities (scheme, upstream_sub, subject_id, manages_claims, created_at, last_sign_in_at)
         VALUES ($1, $2, $3, false, $4::timestamptz, $4::timestamptz) ON CONFLICT DO NOTHING`,
        [link.scheme, link.upstreamSub, subjectId, ts(link.at)],
      )
      return rowCount === 1
    },
    async signedIn(scheme, upstreamSub, at, claims) {
      await db.query(
        `WITH link AS (
           UPDATE federated_identities SET last_sign_in_at = $3::timestamptz
            WHERE scheme = $1 AND upstream_sub = $2 RETURNING subject_id, manages_claims)
         UPDATE users u SET claims = $4::jsonb, updated_at = now()
           FROM link WHERE u.subject_id = link.subject_id AND link.manages_claims AND $4::jsonb IS NOT NULL
            AND u.claims IS DISTINCT FROM $4::jsonb`,
        [scheme, upstreamSub, ts(at), claims === undefined ? null : JSON.stringify(claims)],
      )
    },
    async findUsersByEmail(email) {
      const { rows } = await db.query<UserRow>(
        `SELECT ${USER_COLUMNS} FROM users u WHERE lower(u.claims ->> 'email') = lower($1) LIMIT 2`,
        [email],
      )
      return rows.map(toUser)
    },
    async listForSubject(subjectId) {
      const { rows } = await db.query<LinkRow>('SELECT * FROM federated_identities WHERE subject_id = $1 ORDER BY scheme, upstream_sub', [
        subjectId,
      ])
      return rows.map(toLink)
    },
    async saveRequest(state, browser, r) {
      await db.query(
        `INSERT INTO federation_requests (state_hash, scheme, browser_hash, nonce, code_verifier, return_to, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7::timestamptz, $8::timestamptz)`,
        [handleHash(state), r.scheme, handleHash(browser), r.nonce, r.codeVerifier, r.returnTo ?? null, ts(r.createdAt), ts(r.expiresAt)],
      )
    },
    async consumeRequest(scheme, state, browser, now) {
      const { rows } = await db.query<RequestRow>(
        `UPDATE federation_requests SET consumed_at = $4::timestamptz
          WHERE state_hash = $1 AND scheme = $2 AND browser_hash = $3 AND consumed_at IS NULL AND expires_at > $4::timestamptz
          RETURNING scheme, nonce, code_verifier, return_to, created_at, expires_at`,
        [handleHash(state), scheme, handleHash(browser), ts(now)],
      )
      return rows[0] && toRequest(rows[0])
    },
    removeExpiredRequests: (before, limit) => deleteExpired(db, 'federation_requests', 'state_hash', before, limit),
  }
}
