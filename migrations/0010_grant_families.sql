-- Grant families (RFC 6749 §4.1.2 and §10.4, RFC 9700 §4.14.2): one row per family of tokens
-- issued from one grant. Issuing into a family upserts its row, refusing a revoked one, and inserts
-- the tokens in the same statement; revoking marks the row and deletes the family's tokens in one
-- transaction. Both lock this row, so they exclude each other: a token issued by a request that
-- raced a revocation is either deleted by it or never stored (src/stores/postgres/grants.ts).
-- A family without a row (issued before this table existed) gets one at its next issuance.
CREATE TABLE grant_families (
  family_id  text PRIMARY KEY,
  created_at timestamptz NOT NULL,
  -- The latest expiry of anything issued into the family (null: something never expires); for a
  -- revoked family at least long enough to outlast any request still issuing into it.
  expires_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX grant_families_expires_idx ON grant_families (expires_at) WHERE expires_at IS NOT NULL;
