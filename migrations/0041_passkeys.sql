-- Passkeys (WebAuthn Level 3 public-key credentials) a person registered on their account page,
-- with which they sign in without a password. The relying-party id is the issuer's host; a
-- credential belongs to one user and goes with them.
--   credential_id    the credential's id, base64url (WebAuthn §6.1 credentialId: at most 1023 bytes)
--   public_key       the COSE public key (WebAuthn §6.5.1.1 credentialPublicKey)
--   counter          the signature counter last seen (WebAuthn §6.1.1); 0 when the authenticator keeps none
--   transports       what the browser said the authenticator is reached by (usb, nfc, ble, internal, hybrid)
--   backup_eligible  the BE flag (WebAuthn §6.1): a synced (multi-device) credential; fixed at creation
--   backed_up        the BS flag, as the last use reported it
--   aaguid           the authenticator model's AAGUID (zeros when the authenticator keeps it private)
--   name             the person's label for it on the account page
--   last_used_at     the last sign-in with it; null until then
CREATE TABLE passkeys (
  credential_id   text PRIMARY KEY CHECK (length(credential_id) BETWEEN 1 AND 1400),
  subject_id      text NOT NULL REFERENCES users (subject_id) ON DELETE CASCADE ON UPDATE CASCADE,
  public_key      bytea NOT NULL,
  counter         bigint NOT NULL DEFAULT 0 CHECK (counter >= 0),
  transports      text[] NOT NULL DEFAULT '{}',
  backup_eligible boolean NOT NULL,
  backed_up       boolean NOT NULL,
  aaguid          text NOT NULL,
  name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  created_at      timestamptz NOT NULL,
  last_used_at    timestamptz
);
CREATE INDEX passkeys_subject_idx ON passkeys (subject_id);
