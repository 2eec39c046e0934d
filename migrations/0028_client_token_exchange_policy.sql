-- Token exchange (RFC 8693) policy per client. allowed_subject_token_clients: the clients whose
-- access tokens this client may present as subject_token (none by default: a client exchanges
-- nothing until it is told whose tokens it may act with).
ALTER TABLE clients ADD COLUMN allowed_subject_token_clients text[] NOT NULL DEFAULT '{}';
