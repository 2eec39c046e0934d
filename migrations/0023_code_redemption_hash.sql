-- Who redeemed a one-time artefact (RFC 6749 §4.1.2): for an authorization code, an HMAC keyed
-- with the code itself over the client authentication, code_verifier and redirect_uri of the
-- request that consumed it, set in the same statement as consumed_at. A second redemption moments
-- later is spared only when it computes the same value (a true duplicate of the same request); any
-- other second use revokes the family. Neither the secret nor the verifier is stored, and without
-- the code (kept only as its hash) the value cannot be tested against guesses. Rows consumed
-- before this column existed have none, so a second use of them always revokes.
ALTER TABLE persisted_grants ADD COLUMN redemption_hash text;
