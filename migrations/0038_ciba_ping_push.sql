-- OpenID CIBA Core 1.0 §5 and §10.2, §10.3: ping and push delivery.
--   clients.backchannel_token_delivery_mode            poll (the default), ping or push
--   clients.backchannel_client_notification_endpoint   where pings and pushes are POSTed
ALTER TABLE clients
  ADD COLUMN backchannel_token_delivery_mode text NOT NULL DEFAULT 'poll'
    CHECK (backchannel_token_delivery_mode IN ('poll', 'ping', 'push')),
  ADD COLUMN backchannel_client_notification_endpoint text;

-- The mode a request was made in (a later change of the client's mode does not change how it
-- ends), and, for ping and push, what the delivery needs that the request keeps nowhere else:
-- the auth_req_id itself (otherwise stored only as a hash) and the client_notification_token
-- (§7.1), a bearer credential of the client. delivery_secret holds both as JSON, encrypted with
-- KEY_ENCRYPTION_SECRET when it is set (AES-256-GCM, the request's id as additional data). The
-- decision moves it into the outbox below, in the statement that decides, and clears it here.
ALTER TABLE ciba_requests
  ADD COLUMN delivery_mode text NOT NULL DEFAULT 'poll' CHECK (delivery_mode IN ('poll', 'ping', 'push')),
  ADD COLUMN delivery_secret text;

-- The outbox of pings and pushes (§10.2, §10.3), the design of backchannel_logouts (0020, 0026):
-- a row is written by the statement that decides the request, so a decision is never made
-- without its delivery queued, and a worker on any replica leases due rows (FOR UPDATE SKIP
-- LOCKED), sends them, and records the outcome.
--   secret   the request's delivery_secret; cleared when the row is finished
--   payload  push only: the token response (or error) to POST, sealed as secret is, written once
--            when the tokens are issued so that a retry sends the same tokens; cleared when the
--            row is finished
--   family_id the grant family the pushed tokens were issued into: revoked when they were never delivered
CREATE TABLE ciba_deliveries (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  request_id      text NOT NULL,        -- no foreign key: the request may be cleaned up first
  client_id       text NOT NULL,
  mode            text NOT NULL CHECK (mode IN ('ping', 'push')),
  family_id       text NOT NULL,
  secret          text,
  payload         text,
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  leased_until    timestamptz,
  claimed_at      timestamptz,
  last_error      text,
  http_status     integer,
  created_at      timestamptz NOT NULL,
  finished_at     timestamptz,
  expires_at      timestamptz
);
CREATE INDEX ciba_deliveries_due_idx ON ciba_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX ciba_deliveries_expires_idx ON ciba_deliveries (expires_at);
