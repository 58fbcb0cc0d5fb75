import type pg from 'pg';

/** The server settings the service depends on and does not set itself. */
export interface ServerSettings {
  autovacuum: string;
  trackCounts: string;
}

/**
 * What an operator should change in the server's settings, one sentence each (none: all
 * is well). Ingest plans its batches on the tables' statistics, and the stays and positions
 * grow and change all day: without autovacuum (or without the activity counters it runs
 * on) they are never analyzed again, and a plan chosen for the small table of the first
 * hour can compare every key with every row of a large one (docs/ingest-history.md, "Refreshing
 * positions after late reads"); their dead row versions are never reclaimed either.
 */
export function settingsWarnings(settings: ServerSettings): string[] {
  const warnings: string[] = [];
  if (settings.trackCounts !== 'on') {
    warnings.push(
      'PostgreSQL track_counts is off: autovacuum cannot run, so tables are never vacuumed or analyzed; set track_counts = on',
    );
  } else if (settings.autovacuum !== 'on') {
    warnings.push(
      'PostgreSQL autovacuum is off: the stays and positions ingest writes are never analyzed or vacuumed, and its plans and tables degrade as they grow; set autovacuum = on (or run VACUUM ANALYZE regularly)',
    );
  }
  return warnings;
}

/** The settings of the server behind `pool`. */
export async function serverSettings(pool: pg.Pool): Promise<ServerSettings> {
  const { rows } = await pool.query<{ autovacuum: string; track_counts: string }>(
    `SELECT current_setting('autovacuum') AS autovacuum, current_setting('track_counts') AS track_counts`,
  );
  return { autovacuum: rows[0]!.autovacuum, trackCounts: rows[0]!.track_counts };
}
