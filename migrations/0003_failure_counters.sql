-- Failed-attempt counters shared by every replica (RFC 6749 §10.10, RFC 9700 §4.15, RFC 8628 §5.1):
--   kind 'user'       name = users.subject_id, source = ''         (password lockout)
--   kind 'client'     name = client_id or API name, source = address (client authentication)
--   kind 'user_code'  name = users.subject_id, source = client_id  (CIBA user_code)
-- Every change is one statement (src/stores/postgres/failure-counters.ts). A row past expires_at
-- counts as absent, so its failures and its escalation are forgotten even before cleanup runs.
CREATE TABLE failure_counters (
  kind          text NOT NULL CHECK (kind IN ('user', 'client', 'user_code')),
  name          text NOT NULL,
  source        text NOT NULL,
  failures      integer NOT NULL CHECK (failures >= 0),
  blocks        integer NOT NULL CHECK (blocks >= 0),
  blocked_until timestamptz,
  expires_at    timestamptz NOT NULL,
  PRIMARY KEY (kind, name, source)
);
CREATE INDEX failure_counters_expires_idx ON failure_counters (expires_at);
CREATE INDEX failure_counters_blocked_idx ON failure_counters (kind, blocked_until) WHERE blocked_until IS NOT NULL;
