-- One sign-in session for the whole server (it was the CIBA approval page's own). The cookie
-- holds a 256-bit handle; only its hash is stored (id_hash). A session has two limits:
--   ends_at     the absolute end, sign-in time + SESSION_LIFETIME, never moved;
--   expires_at  the idle deadline, moved forward by use (last use + SESSION_IDLE_TIMEOUT), never
--               past ends_at; so expires_at alone says when the row is dead, and the cleanup's
--               expires_at index serves both limits.
-- The rows of the old CIBA-only sessions belong to a cookie no longer read: they are dropped
-- (people sign in again), which also lets the new columns be NOT NULL without defaults.
DELETE FROM user_sessions;
ALTER TABLE user_sessions
  ADD COLUMN sid        text NOT NULL,                -- public session id (OIDC sid claim, logout): not a secret
  ADD COLUMN amr        text[] NOT NULL,              -- how the person signed in (RFC 8176), e.g. {pwd}
  ADD COLUMN client_ids text[] NOT NULL DEFAULT '{}', -- clients the person used in this session, for logout
  ADD COLUMN ends_at    timestamptz NOT NULL;
CREATE UNIQUE INDEX user_sessions_sid_idx ON user_sessions (sid);
CREATE INDEX user_sessions_subject_idx ON user_sessions (subject_id);

-- The seed file upserts users by username and may change a subject id: a signed-in person stays
-- signed in (as consents stay granted) instead of the change failing on this reference.
ALTER TABLE user_sessions DROP CONSTRAINT user_sessions_subject_id_fkey;
ALTER TABLE user_sessions ADD CONSTRAINT user_sessions_subject_id_fkey
  FOREIGN KEY (subject_id) REFERENCES users (subject_id) ON DELETE CASCADE ON UPDATE CASCADE;

-- Server-wide secrets every replica must share, created once by whichever replica starts first
-- (INSERT ... ON CONFLICT DO NOTHING, then read back). 'csrf' keys the CSRF tokens of every form.
-- value is base64url, or AES-256-GCM ciphertext (v1.<iv>.<tag>.<data>, additional data
-- 'server-secret:<name>') when KEY_ENCRYPTION_SECRET is set, as for the signing keys.
CREATE TABLE server_secrets (
  name       text PRIMARY KEY,
  value      text NOT NULL,
  encrypted  boolean NOT NULL,
  created_at timestamptz NOT NULL
);
