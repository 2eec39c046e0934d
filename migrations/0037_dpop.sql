-- DPoP (RFC 9449): a client whose every token request must carry a proof (Duende's RequireDPoP).
ALTER TABLE clients ADD COLUMN require_dpop boolean NOT NULL DEFAULT false;
