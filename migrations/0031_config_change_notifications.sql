-- Every replica keeps clients, API resources and whether a user is enabled in memory
-- (src/stores/cached.ts). A change to those tables NOTIFYs authz_config_changes with the name of
-- the cache it touches, so that every replica drops that cache as soon as the change commits,
-- whoever wrote it: the seed file, the CLI, the admin API, or SQL run by hand. CLIENT_CACHE_TTL
-- stays as the bound for a notification that is missed.
-- NOTIFY is sent at commit and identical payloads of one transaction are sent once, so a row
-- trigger costs one notification per cache per transaction, and none when no row changed.
CREATE FUNCTION notify_config_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('authz_config_changes', TG_ARGV[0]);
  RETURN NULL;
END
$$;

CREATE TRIGGER clients_changed AFTER INSERT OR UPDATE OR DELETE ON clients
  FOR EACH ROW EXECUTE FUNCTION notify_config_change('clients');
CREATE TRIGGER clients_truncated AFTER TRUNCATE ON clients
  FOR EACH STATEMENT EXECUTE FUNCTION notify_config_change('clients');
CREATE TRIGGER client_secrets_changed AFTER INSERT OR UPDATE OR DELETE ON client_secrets
  FOR EACH ROW EXECUTE FUNCTION notify_config_change('clients');
CREATE TRIGGER client_secrets_truncated AFTER TRUNCATE ON client_secrets
  FOR EACH STATEMENT EXECUTE FUNCTION notify_config_change('clients');

CREATE TRIGGER api_scopes_changed AFTER INSERT OR UPDATE OR DELETE ON api_scopes
  FOR EACH ROW EXECUTE FUNCTION notify_config_change('resources');
CREATE TRIGGER api_scopes_truncated AFTER TRUNCATE ON api_scopes
  FOR EACH STATEMENT EXECUTE FUNCTION notify_config_change('resources');
CREATE TRIGGER api_resources_changed AFTER INSERT OR UPDATE OR DELETE ON api_resources
  FOR EACH ROW EXECUTE FUNCTION notify_config_change('resources');
CREATE TRIGGER api_resources_truncated AFTER TRUNCATE ON api_resources
  FOR EACH STATEMENT EXECUTE FUNCTION notify_config_change('resources');
CREATE TRIGGER api_resource_scopes_changed AFTER INSERT OR UPDATE OR DELETE ON api_resource_scopes
  FOR EACH ROW EXECUTE FUNCTION notify_config_change('resources');
CREATE TRIGGER api_resource_scopes_truncated AFTER TRUNCATE ON api_resource_scopes
  FOR EACH STATEMENT EXECUTE FUNCTION notify_config_change('resources');
CREATE TRIGGER api_resource_secrets_changed AFTER INSERT OR UPDATE OR DELETE ON api_resource_secrets
  FOR EACH ROW EXECUTE FUNCTION notify_config_change('resources');
CREATE TRIGGER api_resource_secrets_truncated AFTER TRUNCATE ON api_resource_secrets
  FOR EACH STATEMENT EXECUTE FUNCTION notify_config_change('resources');
CREATE TRIGGER identity_resources_changed AFTER INSERT OR UPDATE OR DELETE ON identity_resources
  FOR EACH ROW EXECUTE FUNCTION notify_config_change('resources');
CREATE TRIGGER identity_resources_truncated AFTER TRUNCATE ON identity_resources
  FOR EACH STATEMENT EXECUTE FUNCTION notify_config_change('resources');

CREATE TRIGGER users_changed AFTER INSERT OR UPDATE OR DELETE ON users
  FOR EACH ROW EXECUTE FUNCTION notify_config_change('users');
CREATE TRIGGER users_truncated AFTER TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION notify_config_change('users');
