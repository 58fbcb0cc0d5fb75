import type { FastifyBaseLogger } from 'fastify';
import { PeriodicPass } from '../periodic-pass.js';
import type { Database, Tx } from './pool.js';

/**
 * The tables the hot statements are planned on: ingest's tag, scan point, stay and position
 * look-ups and writes, the asset search and the report.
 */
export const PLANNED_TABLES = [
  'assets',
  'tags',
  'locations',
  'scan_points',
  'readers',
  'stays',
  'asset_positions',
] as const;

/** Rows changed before a table that was never analyzed is analyzed: autovacuum's own threshold. */
export const FIRST_ANALYZE_CHANGES = 50;

/**
 * Analyzes the PLANNED_TABLES that changed but were never analyzed, and returns their names.
 *
 * A site's first assets and tags, created in bulk, have no statistics until autovacuum's
 * first pass over the new database, a minute or two later; meanwhile the planner takes each
 * table for a row or so and picks plans that read every tag of the organization for each
 * read and every asset for each tag. Measured (bench:soak, readers alone, 2,000 assets):
 * ingest's tag look-up took 24 ms for 38 tags before the first ANALYZE and 0.24 ms after,
 * and PostgreSQL's CPU for the same reads was twice what it was later. ANALYZE of a table of
 * a few thousand rows takes milliseconds. A table analyzed once keeps its statistics when
 * it grows (the planner scales them by its size), and autovacuum takes over from there.
 */
export async function analyzeNeverAnalyzed(tx: Tx, minChanges = FIRST_ANALYZE_CHANGES): Promise<string[]> {
  const { rows } = await tx.query<{ relname: string }>(
    `SELECT relname FROM pg_stat_user_tables
     WHERE schemaname = current_schema() AND relname = ANY($1::text[])
       AND last_analyze IS NULL AND last_autoanalyze IS NULL AND n_mod_since_analyze >= $2
     ORDER BY relname`,
    [PLANNED_TABLES, minChanges],
  );
  for (const { relname } of rows) await tx.query(`ANALYZE ${tx.escapeIdentifier(relname)}`);
  return rows.map((r) => r.relname);
}

/** analyzeNeverAnalyzed at start and every 10 seconds, as the tables' owner. */
export class FirstAnalyze extends PeriodicPass {
  constructor(db: Database, logger: FastifyBaseLogger, intervalMs = 10_000) {
    super(async () => {
      try {
        const analyzed = await db.system((tx) => analyzeNeverAnalyzed(tx));
        if (analyzed.length > 0)
          logger.info({ tables: analyzed }, 'analyzed tables that had no statistics yet');
      } catch (err) {
        // Only plans suffer meanwhile, and autovacuum analyzes them anyway.
        logger.warn({ err }, 'analyzing new tables failed; retried at the next pass');
      }
    }, intervalMs);
  }
}
