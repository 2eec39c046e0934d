-- Token exchange (RFC 8693) policy per client, none by default: a client exchanges nothing until
-- it is told whose tokens it may act with and for which APIs.
-- allowed_subject_token_clients: the clients whose access tokens it may present as subject_token.
-- allowed_exchange_audiences: the API resources (by name) it may obtain exchanged tokens for.
ALTER TABLE clients ADD COLUMN allowed_subject_token_clients text[] NOT NULL DEFAULT '{}';
ALTER TABLE clients ADD COLUMN allowed_exchange_audiences text[] NOT NULL DEFAULT '{}';
