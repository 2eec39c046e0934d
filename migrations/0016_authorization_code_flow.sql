-- The authorization code flow and RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0
-- §3): where a client may ask to be sent back after logout, matched as exact strings like
-- redirect_uris. Authorization codes live in persisted_grants (kind 'authorization_code').
ALTER TABLE clients ADD COLUMN post_logout_redirect_uris text[] NOT NULL DEFAULT '{}';
