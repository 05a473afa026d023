-- The key a rotation replaced, kept with the new key so that the pair can
-- be shown together: '' for a key made otherwise, and for every key made
-- before this migration. It never changes.
ALTER TABLE api_keys ADD COLUMN replaces TEXT NOT NULL DEFAULT '';
