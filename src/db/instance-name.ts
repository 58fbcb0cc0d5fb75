import { migrationFiles } from './migration-files.js';

/** The number of this build's newest migration (64 for `0064_tag_match_key_unique`). */
export const BUILD_SCHEMA_NUMBER = Number.parseInt(migrationFiles().at(-1)?.slice(0, 4) ?? '0', 10);

/**
 * The `application_name` of every connection this build opens, `tagtrail@0064`: so that a
 * newer build about to migrate can see that an older one still runs on the database
 * (migrate.ts), and so that an operator can tell the builds apart in `pg_stat_activity`.
 */
export const APPLICATION_NAME = `tagtrail@${String(BUILD_SCHEMA_NUMBER).padStart(4, '0')}`;
