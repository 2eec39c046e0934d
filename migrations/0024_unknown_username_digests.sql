-- Failure counters of usernames no account has (kind 'user', source 'unknown-username') are now
-- named by the name's HMAC-SHA256 under the server secret 'username-hmac'
-- (src/interaction/password-check.ts), never by the name as typed, which may be a password typed
-- into the username field. The rows counted before hold the names themselves: remove them. Only
-- the counts of names no account has start again; accounts' counters are untouched.
DELETE FROM failure_counters WHERE kind = 'user' AND source = 'unknown-username';
