-- Pushed authorization requests (RFC 9126) and request objects (RFC 9101).
--
-- pushed_authorization_requests: an authorization request a client pushed to /connect/par (or
-- sent as a request object to the authorization endpoint), held for the request_uri that names
-- it. Only the SHA-256 of the handle is stored. params are the validated authorization
-- parameters as [name, value] pairs. via_par: it came through the PAR endpoint; signed: it came
-- from a request object. opened_at: first arrival at the authorization endpoint; used_at: a code
-- was issued from it, so it can never be used again.
CREATE TABLE pushed_authorization_requests (
  handle_hash text PRIMARY KEY,
  client_id   text NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
  params      jsonb NOT NULL,
  via_par     boolean NOT NULL,
  signed      boolean NOT NULL,
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL,
  opened_at   timestamptz,
  used_at     timestamptz
);
CREATE INDEX pushed_authorization_requests_expires_at ON pushed_authorization_requests (expires_at);

-- Duende's RequirePushedAuthorization and RequireRequestObject.
ALTER TABLE clients ADD COLUMN require_pushed_authorization boolean NOT NULL DEFAULT false;
ALTER TABLE clients ADD COLUMN require_request_object boolean NOT NULL DEFAULT false;
