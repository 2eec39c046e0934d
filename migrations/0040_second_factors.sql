-- Second factors (RFC 6238 one-time codes and their recovery codes), and who must use one.
--   users.require_mfa, clients.require_mfa   every sign-in of the user, or for the client, needs a
--                                             second factor or a passkey (src/interaction/authentication-level.ts)
--   user_totp.secret          the confirmed TOTP secret (base32); encrypted (v1.<iv>.<tag>.<data>,
--                             src/keys/key-crypto.ts) when KEY_ENCRYPTION_SECRET is set; NULL: none yet
--   user_totp.pending_secret  a secret shown on the enrolment page and not yet confirmed by a code
--   user_totp.last_used_step  the RFC 6238 time step of the last code accepted: a code is accepted
--                             once, and never one of an earlier step (RFC 6238 §5.2)
--   user_recovery_codes       single-use recovery codes, only their SHA-256 (they carry 80 random
--                             bits each, so a hash is as safe as a handle's); used_at: spent
ALTER TABLE users ADD COLUMN require_mfa boolean NOT NULL DEFAULT false;
ALTER TABLE clients ADD COLUMN require_mfa boolean NOT NULL DEFAULT false;

CREATE TABLE user_totp (
  subject_id          text PRIMARY KEY REFERENCES users (subject_id) ON DELETE CASCADE,
  secret              text,
  confirmed_at        timestamptz,
  last_used_step      bigint,
  last_used_at        timestamptz,
  pending_secret      text,
  pending_created_at  timestamptz
);

CREATE TABLE user_recovery_codes (
  subject_id  text NOT NULL REFERENCES users (subject_id) ON DELETE CASCADE,
  code_hash   text NOT NULL,
  created_at  timestamptz NOT NULL,
  used_at     timestamptz,
  PRIMARY KEY (subject_id, code_hash)
);
