-- Identity providers are administered while the server runs (the admin API, the seed file): a
-- change to them NOTIFYs authz_config_changes as migration 0031's tables do, so that every replica
-- drops what it keeps of a provider (its upstream's discovery document and the client made from
-- it) as soon as the change commits, whoever wrote it.
CREATE TRIGGER identity_providers_changed AFTER INSERT OR UPDATE OR DELETE ON identity_providers
  FOR EACH ROW EXECUTE FUNCTION notify_config_change('identityProviders');
CREATE TRIGGER identity_providers_truncated AFTER TRUNCATE ON identity_providers
  FOR EACH STATEMENT EXECUTE FUNCTION notify_config_change('identityProviders');
