-- The whole schema the protocol needs: configuration (clients, APIs, scopes, users),
-- runtime state (persisted grants, CIBA requests, revocations, sessions) and signing keys.
-- Handles are never stored: only their SHA-256 (base64url) in *_hash columns.
-- Runs unchanged on PostgreSQL >= 14 and on PGlite.

CREATE TABLE clients (
  client_id                       text PRIMARY KEY CHECK (length(client_id) BETWEEN 1 AND 200),
  client_name                     text,
  enabled                         boolean NOT NULL DEFAULT true,
  require_client_secret           boolean NOT NULL DEFAULT true,
  allowed_grant_types             text[] NOT NULL DEFAULT '{}',
  allowed_scopes                  text[] NOT NULL DEFAULT '{}',
  redirect_uris                   text[] NOT NULL DEFAULT '{}',
  require_pkce                    boolean NOT NULL DEFAULT true,
  allow_offline_access            boolean NOT NULL DEFAULT false,
  access_token_type               text NOT NULL DEFAULT 'jwt' CHECK (access_token_type IN ('jwt', 'reference')),
  access_token_lifetime           integer CHECK (access_token_lifetime > 0),
  refresh_token_usage             text NOT NULL DEFAULT 'oneTimeOnly' CHECK (refresh_token_usage IN ('oneTimeOnly', 'reUse')),
  refresh_token_expiration        text NOT NULL DEFAULT 'absolute' CHECK (refresh_token_expiration IN ('absolute', 'sliding')),
  absolute_refresh_token_lifetime integer NOT NULL DEFAULT 2592000 CHECK (absolute_refresh_token_lifetime >= 0),
  sliding_refresh_token_lifetime  integer NOT NULL DEFAULT 1296000 CHECK (sliding_refresh_token_lifetime >= 0),
  ciba_lifetime                   integer CHECK (ciba_lifetime > 0),
  polling_interval                integer CHECK (polling_interval > 0),
  identity_provider_restrictions  text[] NOT NULL DEFAULT '{}',
  require_consent                 boolean NOT NULL DEFAULT false,
  jwks                            jsonb,
  created_at                      timestamptz NOT NULL DEFAULT now(),
  updated_at                      timestamptz NOT NULL DEFAULT now()
);

-- value_hash: base64(SHA-256(secret)) or base64(SHA-512(secret)), as Duende stores them.
CREATE TABLE client_secrets (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  client_id   text NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
  value_hash  text NOT NULL,
  description text,
  expires_at  timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (client_id, value_hash)
);

CREATE TABLE api_scopes (
  name         text PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 200 AND name !~ '\s'),
  display_name text,
  description  text,
  enabled      boolean NOT NULL DEFAULT true,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_resources (
  name         text PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 200),
  display_name text,
  enabled      boolean NOT NULL DEFAULT true,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_resource_scopes (
  api_resource_name text NOT NULL REFERENCES api_resources (name) ON DELETE CASCADE,
  scope_name        text NOT NULL REFERENCES api_scopes (name) ON DELETE CASCADE,
  PRIMARY KEY (api_resource_name, scope_name)
);
CREATE INDEX api_resource_scopes_scope_idx ON api_resource_scopes (scope_name);

CREATE TABLE api_resource_secrets (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  api_resource_name text NOT NULL REFERENCES api_resources (name) ON DELETE CASCADE,
  value_hash        text NOT NULL,
  description       text,
  expires_at        timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (api_resource_name, value_hash)
);

CREATE TABLE identity_resources (
  name         text PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 200 AND name !~ '\s'),
  display_name text,
  claims       text[] NOT NULL DEFAULT '{}',
  enabled      boolean NOT NULL DEFAULT true,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);

-- password_hash: scrypt$N$r$p$salt$hash; ciba_user_code_hash likewise.
CREATE TABLE users (
  subject_id          text PRIMARY KEY CHECK (length(subject_id) BETWEEN 1 AND 200),
  username            text NOT NULL UNIQUE CHECK (length(username) BETWEEN 1 AND 200),
  password_hash       text,
  enabled             boolean NOT NULL DEFAULT true,
  claims              jsonb NOT NULL DEFAULT '{}',
  ciba_user_code_hash text,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
-- CIBA login_hint may name a user by e-mail address.
CREATE INDEX users_email_idx ON users (lower(claims ->> 'email'));

-- Authorization codes, refresh tokens, reference access tokens, device codes and the JWT access
-- tokens issued from a grant (kept by jti hash so that a family revocation can revoke them).
-- family_id ties together everything issued from one grant (RFC 9700 §4.14.2 reuse detection).
CREATE TABLE persisted_grants (
  handle_hash text PRIMARY KEY,
  kind        text NOT NULL CHECK (kind IN ('authorization_code', 'refresh_token', 'reference_token', 'device_code', 'jwt_access_token')),
  client_id   text NOT NULL,
  subject_id  text,
  family_id   text NOT NULL,
  data        jsonb NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz,
  consumed_at timestamptz
);
CREATE INDEX persisted_grants_family_idx ON persisted_grants (family_id);
CREATE INDEX persisted_grants_expires_idx ON persisted_grants (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX persisted_grants_subject_idx ON persisted_grants (subject_id, client_id) WHERE subject_id IS NOT NULL;

-- Revoked JWT access tokens, by jti, kept until the token would have expired anyway.
CREATE TABLE revoked_tokens (
  jti        text PRIMARY KEY,
  client_id  text NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz NOT NULL
);
CREATE INDEX revoked_tokens_expires_idx ON revoked_tokens (expires_at);

-- CIBA (OpenID CIBA Core 1.0) poll-mode requests. id is the request id shown in the approval URL;
-- it is not the auth_req_id, which is stored only as a hash.
CREATE TABLE ciba_requests (
  id                  text PRIMARY KEY,
  auth_req_id_hash    text NOT NULL UNIQUE,
  client_id           text NOT NULL,
  subject_id          text NOT NULL,
  requested_scopes    text[] NOT NULL,
  resources           text[] NOT NULL DEFAULT '{}',
  acr_values          text[] NOT NULL DEFAULT '{}',
  tenant              text,
  idp                 text,
  binding_message     text,
  status              text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied')),
  approved_scopes     text[],
  auth_time           timestamptz,
  interval_seconds    integer NOT NULL CHECK (interval_seconds > 0),
  last_polled_at      timestamptz,
  family_id           text NOT NULL,
  created_at          timestamptz NOT NULL,
  expires_at          timestamptz NOT NULL,
  decided_at          timestamptz,
  consumed_at         timestamptz
);
CREATE INDEX ciba_requests_expires_idx ON ciba_requests (expires_at);
CREATE INDEX ciba_requests_pending_idx ON ciba_requests (subject_id, created_at) WHERE status = 'pending';

-- Request-object and login_hint_token jti values already seen (replay protection), until they expire.
CREATE TABLE used_jtis (
  client_id  text NOT NULL,
  jti        text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, jti)
);
CREATE INDEX used_jtis_expires_idx ON used_jtis (expires_at);

-- Sign-in sessions of the pages a person uses (CIBA approval); the cookie value is stored hashed.
CREATE TABLE user_sessions (
  id_hash    text PRIMARY KEY,
  subject_id text NOT NULL REFERENCES users (subject_id) ON DELETE CASCADE,
  auth_time  timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX user_sessions_expires_idx ON user_sessions (expires_at);

-- Signing keys, shared by every replica. private_jwk is JSON, or AES-256-GCM ciphertext
-- (v1.<iv>.<tag>.<data>, base64url) when KEY_ENCRYPTION_SECRET is set.
-- A key is published in JWKS from created_at until retire_at (null: still current),
-- and signs from activate_at on, until a newer key of the same algorithm activates.
CREATE TABLE signing_keys (
  kid          text PRIMARY KEY,
  alg          text NOT NULL CHECK (alg IN ('ES256', 'RS256', 'PS256', 'EdDSA')),
  use          text NOT NULL DEFAULT 'sig',
  public_jwk   jsonb NOT NULL,
  private_jwk  text NOT NULL,
  encrypted    boolean NOT NULL,
  created_at   timestamptz NOT NULL,
  activate_at  timestamptz NOT NULL,
  retire_at    timestamptz
);
CREATE INDEX signing_keys_alg_idx ON signing_keys (alg, activate_at);
