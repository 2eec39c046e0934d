// Users: subject id, username, scrypt password hash, claims (OIDC Core §5.1) and the CIBA user code hash.
import type { Queryable } from '../db/db.js'
import type { User } from '../domain/types.js'
import type { UserStore } from './users.js'

interface UserRow {
  subject_id: string
  username: string
  password_hash: string | null
  enabled: boolean
  claims: Record<string, unknown>
  ciba_user_code_hash: string | null
  require_mfa: boolean
}

const SELECT_USER = 'SELECT subject_id, username, password_hash, enabled, claims, ciba_user_code_hash, require_mfa FROM users'

function toUser(r: UserRow): User {
  return {
    subjectId: r.subject_id,
    username: r.username,
    passwordHash: r.password_hash ?? undefined,
    enabled: r.enabled,
    claims: r.claims ?? {},
    cibaUserCodeHash: r.ciba_user_code_hash ?? undefined,
    requireMfa: r.require_mfa,
  }
}

/** Takes the pool or a transaction (the seed file upserts users inside its own). */
export function createPgUserStore(db: Queryable): UserStore {
  const one = async (where: string, value: string) => {
    const { rows } = await db.query<UserRow>(`${SELECT_USER} WHERE ${where}`, [value])
    return rows[0] && toUser(rows[0])
  }
  return {
    findBySubjectId: (subjectId) => one('subject_id = $1', subjectId),
    async isEnabled(subjectId) {
      const { rows } = await db.query<{ enabled: boolean }>('SELECT enabled FROM users WHERE subject_id = $1', [subjectId])
      return rows[0]?.enabled
    },
    findByUsername: (username) => one('username = $1', username),
    async findByLoginHint(hint) {
      // OpenID CIBA Core §7.1 login_hint: a hint that names two different users identifies
      // nobody, so only a single match counts (LIMIT 2 tells one from many).
      const { rows } = await db.query<UserRow>(
        `${SELECT_USER} WHERE username = $1 OR subject_id = $1 OR lower(claims ->> 'email') = lower($1) LIMIT 2`,
        [hint],
      )
      return rows.length === 1 && rows[0] ? toUser(rows[0]) : undefined
    },
    async upsert(user) {
      // Keyed by username; updated_at moves only when something really changed. subject_id stays
      // in the SET so that a username given another subject fails (migration 0025's trigger, OIDC
      // Core §2) instead of updating the stored subject's row as if it were the new one.
      // require_mfa: a writer that does not set it (undefined) keeps what is stored; a new user gets false.
      await db.query(
        `INSERT INTO users (subject_id, username, password_hash, enabled, claims, ciba_user_code_hash, require_mfa)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6, coalesce($7::boolean, false))
         ON CONFLICT (username) DO UPDATE SET
           subject_id = EXCLUDED.subject_id, password_hash = EXCLUDED.password_hash, enabled = EXCLUDED.enabled,
           claims = EXCLUDED.claims, ciba_user_code_hash = EXCLUDED.ciba_user_code_hash,
           require_mfa = coalesce($7::boolean, users.require_mfa), updated_at = now()
         WHERE (users.subject_id, users.password_hash, users.enabled, users.claims, users.ciba_user_code_hash, users.require_mfa)
           IS DISTINCT FROM (EXCLUDED.subject_id, EXCLUDED.password_hash, EXCLUDED.enabled, EXCLUDED.claims, EXCLUDED.ciba_user_code_hash,
             coalesce($7::boolean, users.require_mfa))`,
        [
          user.subjectId,
          user.username,
          user.passwordHash ?? null,
          user.enabled,
          JSON.stringify(user.claims),
          user.cibaUserCodeHash ?? null,
          user.requireMfa ?? null,
        ],
      )
    },
    async list() {
      const { rows } = await db.query<UserRow>(`${SELECT_USER} ORDER BY username`)
      return rows.map(toUser)
    },
    async setPasswordHash(subjectId, passwordHash) {
      const { rowCount } = await db.query('UPDATE users SET password_hash = $2, updated_at = now() WHERE subject_id = $1', [
        subjectId,
        passwordHash,
      ])
      return rowCount === 1
    },
    async setEnabled(username, enabled) {
      const { rowCount } = await db.query('UPDATE users SET enabled = $2, updated_at = now() WHERE username = $1', [username, enabled])
      return rowCount === 1
    },
    async remove(username) {
      // One statement, so one transaction: what was issued to or decided for the subject goes with
      // the user. persisted_grants, ciba_requests and device_authorizations have no foreign key to
      // users, and a user re-created with the same subject id (OIDC Core §2 says it is never
      // reassigned; an operator may do it anyway) must not inherit the old tokens or approvals.
      // Consents and sessions follow the user by ON DELETE CASCADE.
      const { rows } = await db.query(
        `WITH removed AS (DELETE FROM users WHERE username = $1 RETURNING subject_id),
              grants AS (DELETE FROM persisted_grants WHERE subject_id IN (SELECT subject_id FROM removed)),
              ciba AS (DELETE FROM ciba_requests WHERE subject_id IN (SELECT subject_id FROM removed)),
              device AS (DELETE FROM device_authorizations WHERE subject_id IN (SELECT subject_id FROM removed))
         SELECT subject_id FROM removed`,
        [username],
      )
      return rows.length === 1
    },
  }
}
