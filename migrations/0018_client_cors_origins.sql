-- The origins a browser-based client's pages are served from (Duende's AllowedCorsOrigins): the
-- token, userinfo and revocation endpoints let a page of that origin read their answers (CORS).
ALTER TABLE clients ADD COLUMN allowed_cors_origins text[] NOT NULL DEFAULT '{}';
