-- Dynamic Client Registration (RFC 7591) and its management protocol (RFC 7592).
-- clients.self_registered: how a client came to be, when not by the operator: 'registration' (this
-- endpoint) or 'metadata-document' (a Client ID Metadata Document); NULL: the seed, CLI or admin API.
-- IF NOT EXISTS: the column is shared with the metadata documents' migration, whichever runs first.
ALTER TABLE clients ADD COLUMN IF NOT EXISTS self_registered text
  CHECK (self_registered IN ('registration', 'metadata-document'));

-- One row per registered client: the SHA-256 of its registration access token (RFC 7592 §3;
-- replaced on every update), the metadata as registered (what a read answers), and when it was
-- last used, so that one nobody uses is removed (REGISTERED_CLIENT_IDLE_LIFETIME).
CREATE TABLE client_registrations (
  client_id          text PRIMARY KEY REFERENCES clients (client_id) ON DELETE CASCADE,
  access_token_hash  text NOT NULL UNIQUE,
  metadata           jsonb NOT NULL,
  created_at         timestamptz NOT NULL,
  last_used_at       timestamptz NOT NULL
);
CREATE INDEX client_registrations_last_used_at ON client_registrations (last_used_at);

-- Initial access tokens (RFC 7591 §3, REGISTRATION=token), made with `authz registration-tokens
-- create`: stored as SHA-256, usable until expires_at and at most max_uses times (NULL: no limit).
CREATE TABLE registration_tokens (
  id          text PRIMARY KEY,
  token_hash  text NOT NULL UNIQUE,
  description text,
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL,
  max_uses    integer CHECK (max_uses > 0),
  uses        integer NOT NULL DEFAULT 0,
  revoked_at  timestamptz
);
