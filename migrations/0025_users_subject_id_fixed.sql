-- OpenID Connect Core §2: a subject identifier is never reassigned. The seed file upserts users by
-- username and used to move a username to the subject id a file gave it; the user's tokens,
-- consents and sessions were left with (or dragged to) another subject, and the old subject id was
-- free to be given to someone who would then inherit what was issued to it. The seed and the CLI
-- now refuse such a change with a message naming the user; this trigger makes it impossible
-- whatever writes the row (a race between their check and their write, or SQL run by hand), so
-- the ON UPDATE CASCADE of 0008 and 0009 no longer has anything to follow. To give a person a new
-- subject, remove the user (authz users remove) and create them again.
CREATE FUNCTION users_subject_id_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the subject id of user "%" never changes', OLD.username USING ERRCODE = 'check_violation';
END
$$;
CREATE TRIGGER users_subject_id_fixed BEFORE UPDATE OF subject_id ON users
  FOR EACH ROW WHEN (OLD.subject_id IS DISTINCT FROM NEW.subject_id)
  EXECUTE FUNCTION users_subject_id_fixed();
