-- Consent (OpenID Connect Core §3.1.2.4): the scopes a user has allowed a client, remembered
-- until the user (or an operator) revokes them. One row per user and client; granting again
-- merges the scopes. Times come from the application's clock, so they have no defaults.
-- A removed user or client takes its consents with it. A user whose subject id is changed
-- (the seed file upserts by username) keeps them: the decision was that person's.
CREATE TABLE consents (
  subject_id text NOT NULL REFERENCES users (subject_id) ON DELETE CASCADE ON UPDATE CASCADE,
  client_id  text NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
  scopes     text[] NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (subject_id, client_id)
);
-- Removing a client deletes its consents through this index rather than a scan.
CREATE INDEX consents_client_idx ON consents (client_id);

-- The decision screen describes each identity scope as it does API scopes.
ALTER TABLE identity_resources ADD COLUMN description text;
