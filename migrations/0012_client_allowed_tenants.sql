-- The tenants a client may assert with acr_values `tenant:<name>` (none by default): a tenant ends
-- up in the client's tokens, so a client names only the tenants it is configured for.
ALTER TABLE clients ADD COLUMN allowed_tenants text[] NOT NULL DEFAULT '{}';
