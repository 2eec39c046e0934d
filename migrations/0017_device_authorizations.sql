-- RFC 8628 device authorization requests. id is internal; the device_code is stored only as a
-- hash, and so is the user_code (normalized: upper case, no dash). The user_code is unique among
-- every stored request (pending ones included), so a code the person types names one request.
-- Polling (interval_seconds, last_polled_at) follows the same rules as ciba_requests: the
-- interval grows by 5 s on a too-early poll, in the database, so every replica agrees.
CREATE TABLE device_authorizations (
  id               text PRIMARY KEY,
  device_code_hash text NOT NULL UNIQUE,
  user_code_hash   text NOT NULL UNIQUE,
  client_id        text NOT NULL,
  requested_scopes text[] NOT NULL,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied')),
  subject_id       text,
  approved_scopes  text[],
  auth_time        timestamptz,
  amr              text[],
  interval_seconds integer NOT NULL CHECK (interval_seconds > 0),
  last_polled_at   timestamptz,
  family_id        text NOT NULL,
  created_at       timestamptz NOT NULL,
  expires_at       timestamptz NOT NULL,
  decided_at       timestamptz,
  consumed_at      timestamptz
);
CREATE INDEX device_authorizations_expires_idx ON device_authorizations (expires_at);

-- Wrong user codes typed on the device page, counted per source address (RFC 8628 §5.1):
--   kind 'device_user_code'  name = the address, source = ''
ALTER TABLE failure_counters DROP CONSTRAINT failure_counters_kind_check;
ALTER TABLE failure_counters ADD CONSTRAINT failure_counters_kind_check
  CHECK (kind IN ('user', 'client', 'user_code', 'device_user_code'));
