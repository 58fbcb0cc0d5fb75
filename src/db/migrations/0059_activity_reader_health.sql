-- A reader's health columns (0015: rate_minute, rate_reads, rate_errors, rate_prev_reads,
-- rate_prev_errors, last_error_at) are scan-derived like its counters, which 0044 already
-- leaves out of the activity values: every message rewrites them, so an entry showed the
-- reader's traffic at the moment someone edited it. Only the readers' triggers change.
DROP TRIGGER IF EXISTS activity ON readers;
DROP TRIGGER IF EXISTS activity_created ON readers;

CREATE TRIGGER activity AFTER DELETE OR UPDATE OF name, family, identity, topic, webhook_secret_hash,
    mqtt_password_hash, deleted_at ON readers FOR EACH ROW
  EXECUTE FUNCTION record_activity('reader', 'deleted_at',
    'org_id,last_message_at,good_reads,bad_reads,unknown_reads,rate_minute,rate_reads,rate_errors,rate_prev_reads,rate_prev_errors,last_error_at',
    'webhook_secret_hash,mqtt_password_hash');

CREATE TRIGGER activity_created AFTER INSERT ON readers REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION record_activity_inserts('reader',
    'org_id,last_message_at,good_reads,bad_reads,unknown_reads,rate_minute,rate_reads,rate_errors,rate_prev_reads,rate_prev_errors,last_error_at',
    'webhook_secret_hash,mqtt_password_hash');
