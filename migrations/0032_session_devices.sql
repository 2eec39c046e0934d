-- The account page lists a person's sessions so that they can recognise and end each one: the
-- browser it was started in and when it was last used.
--   user_agent    the User-Agent the sign-in came with (cut to 512 characters); null for sessions
--                 from before, and for a browser that sent none
--   last_used_at  moved forward by every use, with expires_at; sessions from before start at
--                 their sign-in time
ALTER TABLE user_sessions
  ADD COLUMN user_agent   text,
  ADD COLUMN last_used_at timestamptz;
UPDATE user_sessions SET last_used_at = auth_time;
ALTER TABLE user_sessions ALTER COLUMN last_used_at SET NOT NULL;
