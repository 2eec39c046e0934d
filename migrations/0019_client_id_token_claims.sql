-- Whether the client's ID tokens carry the user's claims of the granted identity scopes (Duende's
-- AlwaysIncludeUserClaimsInIdToken; our default true): false leaves them to userinfo (OpenID
-- Connect Core §5.4) and the ID token carries the protocol claims only.
ALTER TABLE clients ADD COLUMN always_include_user_claims_in_id_token boolean NOT NULL DEFAULT true;
