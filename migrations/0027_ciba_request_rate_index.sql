-- The rate of CIBA requests per client and user (CIBA_RATE_LIMIT_PER_USER) looks, at every
-- backchannel authentication request, for the newest requests of one client for one user
-- whatever their status: this index answers that from the rows of that pair alone.
CREATE INDEX ciba_requests_client_subject_created_idx ON ciba_requests (client_id, subject_id, created_at);
