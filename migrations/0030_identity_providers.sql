-- Federation: upstream OpenID Connect providers a person may sign in through (the seed file's
-- identityProviders, keyed by scheme; field names after Duende's dynamic providers).
--   client_secret  plain, or AES-256-GCM ciphertext (v1.<iv>.<tag>.<data>, additional data
--                  'identity-provider:<scheme>') when client_secret_encrypted, as the signing keys
CREATE TABLE identity_providers (
  scheme                  text PRIMARY KEY,
  display_name            text NOT NULL,
  type                    text NOT NULL CHECK (type IN ('oidc')),
  authority               text NOT NULL,
  client_id               text NOT NULL,
  client_secret           text,
  client_secret_encrypted boolean NOT NULL DEFAULT false,
  scope                   text NOT NULL,
  enabled                 boolean NOT NULL DEFAULT true,
  email_domains           text[] NOT NULL DEFAULT '{}',
  link_by_verified_email  boolean NOT NULL DEFAULT false,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now()
);

-- A local user linked to an upstream identity: (scheme, upstream sub) finds the same local
-- subject at every sign-in, so the sub an app sees never changes (OpenID Connect Core §2).
-- manages_claims: the user was created by this link, and its profile claims follow the upstream's.
CREATE TABLE federated_identities (
  scheme          text NOT NULL,
  upstream_sub    text NOT NULL,
  subject_id      text NOT NULL REFERENCES users (subject_id) ON DELETE CASCADE,
  manages_claims  boolean NOT NULL,
  created_at      timestamptz NOT NULL,
  last_sign_in_at timestamptz NOT NULL,
  PRIMARY KEY (scheme, upstream_sub)
);
CREATE INDEX federated_identities_subject_idx ON federated_identities (subject_id);

-- A sign-in sent upstream and not yet back: the state is stored only as a hash, bound to the
-- browser that started it (browser_hash: SHA-256 of a cookie value), and consumed once.
CREATE TABLE federation_requests (
  state_hash    text PRIMARY KEY,
  scheme        text NOT NULL,
  browser_hash  text NOT NULL,
  nonce         text NOT NULL,
  code_verifier text NOT NULL,
  return_to     text,
  created_at    timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL,
  consumed_at   timestamptz
);
CREATE INDEX federation_requests_expires_idx ON federation_requests (expires_at);

-- Duende's EnableLocalLogin: false hides the password form from the client's sign-ins.
ALTER TABLE clients ADD COLUMN enable_local_login boolean NOT NULL DEFAULT true;

-- A session that began upstream: the scheme, the upstream's sid (its back-channel logout names
-- it) and sub, and the ID token it gave us (the id_token_hint of the upstream sign-out).
ALTER TABLE user_sessions
  ADD COLUMN idp               text,
  ADD COLUMN upstream_sub      text,
  ADD COLUMN upstream_sid      text,
  ADD COLUMN upstream_id_token text;
CREATE INDEX user_sessions_upstream_idx ON user_sessions (idp, upstream_sub) WHERE idp IS NOT NULL;
