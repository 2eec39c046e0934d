-- Client authentication by assertion (RFC 7523 §2.2, OpenID Connect Core §9).
-- token_endpoint_auth_method (RFC 7591 §2): the one method a client may use; NULL keeps the
-- behaviour of before (a secret by Basic or in the body, none for a public client).
-- jwks_uri: where the client's public keys are fetched from, instead of jwks.
ALTER TABLE clients ADD COLUMN token_endpoint_auth_method text
  CHECK (token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post', 'client_secret_jwt', 'private_key_jwt', 'none'));
ALTER TABLE clients ADD COLUMN jwks_uri text;

-- client_secret_jwt signs with the secret itself (HMAC), which its SHA-256 cannot replace. For a
-- client of that method only, the secret is kept beside its hash: AES-256-GCM ciphertext when
-- KEY_ENCRYPTION_SECRET is set (sealed_encrypted), else plain, as identity providers' secrets are.
ALTER TABLE client_secrets ADD COLUMN sealed_value text;
ALTER TABLE client_secrets ADD COLUMN sealed_encrypted boolean NOT NULL DEFAULT false;
