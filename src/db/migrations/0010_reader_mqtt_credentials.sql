-- MQTT credentials of readers (docs/operations.md, "Reader path security"). A reader logs
-- in to the broker as reader-<id> with a random password shown once; only its hash is kept,
-- in Mosquitto's own password-file format ($7$ PBKDF2-SHA512) so that
-- `tagtrail mosquitto-config` can write an external Mosquitto's password file from it.
-- NULL: no credentials (revoked, or a reader registered before this migration).
ALTER TABLE readers ADD COLUMN mqtt_password_hash text
  CHECK (mqtt_password_hash IS NULL OR mqtt_password_hash LIKE '$7$%');
