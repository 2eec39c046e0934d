-- How the person who approved a device or CIBA request signed in, kept until the tokens are
-- issued so that they say it as the authorization code flow's do (OIDC Core §2 auth_time,
-- RFC 8176 amr, and idp: the scheme of the identity provider the sign-in went through).
--   device_authorizations.idp     the approver's provider; NULL: a local sign-in
--   ciba_requests.amr             how the approver signed in; NULL: approved before this column (pwd)
--   ciba_requests.sign_in_idp     the approver's provider, or the request's idp: (local) when the
--                                 sign-in was local; ciba_requests.idp stays what the request named
ALTER TABLE device_authorizations ADD COLUMN idp text;
ALTER TABLE ciba_requests
  ADD COLUMN amr         text[],
  ADD COLUMN sign_in_idp text;
