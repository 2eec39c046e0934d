-- When the current lease on a back-channel logout row was taken, that is when its attempt began.
-- The per-client bound on attempts in flight counts a leased row only while its attempt can
-- still be running (the attempt timeout plus a margin). The lease itself stays long, so that a
-- row is not sent again while its worker may still save the outcome; but a row whose worker
-- died, or whose outcome could not be saved while the database was away, no longer holds up
-- the client's other logouts for the lease's length. NULL on rows leased before this column
-- existed: those count as in flight for their whole lease, as before.
ALTER TABLE backchannel_logouts ADD COLUMN claimed_at timestamptz;
