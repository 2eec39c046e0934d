-- A client profile (src/domain/client-profile.ts): fapi2 turns on the FAPI 2.0 Security Profile's requirements.
ALTER TABLE clients ADD COLUMN profile text CHECK (profile IN ('fapi2'));
