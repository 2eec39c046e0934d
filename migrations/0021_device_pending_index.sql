-- The cap on pending device authorizations per client (DEVICE_MAX_PENDING_PER_CLIENT) counts a
-- client's undecided, unexpired requests at every device authorization request: this index
-- answers that count from the pending rows of one client alone.
CREATE INDEX device_authorizations_pending_idx ON device_authorizations (client_id, expires_at) WHERE status = 'pending';
