-- A signing key whose successor of the same algorithm has activated never signs again: its
-- private part is erased (private_jwk NULL), so that no later copy of the database yields it,
-- while its public part stays published until retire_at for the tokens it signed. Only a key
-- scheduled for retirement (a newer key exists) may lack its private part.
ALTER TABLE signing_keys ALTER COLUMN private_jwk DROP NOT NULL;
ALTER TABLE signing_keys ADD CONSTRAINT signing_keys_private_until_superseded CHECK (private_jwk IS NOT NULL OR retire_at IS NOT NULL);
