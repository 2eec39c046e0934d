-- OpenID Connect Back-Channel Logout 1.0 §2.2: the client's back-channel logout URI and whether
-- it needs the sid claim in logout tokens (Duende's BackChannelLogoutUri and
-- BackChannelLogoutSessionRequired, default true).
ALTER TABLE clients
  ADD COLUMN back_channel_logout_uri text,
  ADD COLUMN back_channel_logout_session_required boolean NOT NULL DEFAULT true;

-- The outbox of logout tokens to send (§2.5). A row is written by the very statement that ends a
-- sign-in session, so a session never ends without its notices being queued, and is sent by a
-- worker on any replica: it leases due rows (leased_until, claimed with FOR UPDATE SKIP LOCKED)
-- so that two replicas never send one row at the same time, then records the outcome. The token
-- itself is never stored: it is signed at each attempt (fresh iat, exp and jti).
--   status          pending until delivered, or failed after the last attempt (or at once on an answer no retry can change)
--   next_attempt_at when a pending row is due (back-off after a failed attempt)
--   expires_at      set when the row is finished: the cleanup removes it after that
CREATE TABLE backchannel_logouts (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  client_id       text NOT NULL,        -- no foreign key: a client removed meanwhile ends its rows as failed
  subject_id      text NOT NULL,
  sid             text,
  reason          text NOT NULL,        -- logout, replaced (a new sign-in), admin
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  leased_until    timestamptz,
  last_error      text,
  http_status     integer,
  created_at      timestamptz NOT NULL,
  finished_at     timestamptz,
  expires_at      timestamptz
);
CREATE INDEX backchannel_logouts_due_idx ON backchannel_logouts (next_attempt_at) WHERE status = 'pending';
CREATE INDEX backchannel_logouts_expires_idx ON backchannel_logouts (expires_at);
