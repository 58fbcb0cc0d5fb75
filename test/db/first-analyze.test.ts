/**
 * Tables created in bulk get statistics at once, not at autovacuum's first pass a minute or
 * two later (src/db/first-analyze.ts): before it, ingest's tag look-up read every tag of the
 * organization for each read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeNeverAnalyzed } from '../../src/db/first-analyze.js';
import { createTestDatabase, insertOrganization, type TestDatabase } from '../helpers/database.js';

let database: TestDatabase;
let orgId: number;
beforeAll(async () => {
  database = await createTestDatabase();
  orgId = await insertOrganization(database.db, 'First analyze');
  // The test decides when the tables are analyzed, not autovacuum.
  await database.db.system(async (tx) => {
    for (const table of ['assets', 'tags', 'locations'])
      await tx.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
  });
});
afterAll(() => database?.drop());

/** Inserts `n` assets as the tables' owner and makes the counters visible at once. */
async function insertAssets(n: number, prefix: string): Promise<void> {
  await database.db.system(async (tx) => {
    await tx.query(
      `INSERT INTO assets (org_id, external_key, name)
       SELECT $1, $2 || g, 'Asset ' || g FROM generate_series(1, $3::int) g`,
      [orgId, prefix, n],
    );
    await tx.query('SELECT pg_stat_force_next_flush()');
  });
}

const lastAnalyze = (table: string) =>
  database.db.system(async (tx) => {
    const { rows } = await tx.query<{ at: Date | null }>(
      'SELECT last_analyze AS at FROM pg_stat_user_tables WHERE relname = $1',
      [table],
    );
    return rows[0]?.at ?? null;
  });

describe('analyzing tables that have no statistics yet', () => {
  it('leaves a table with fewer changes than autovacuum waits for', async () => {
    await insertAssets(10, 'FEW-');
    expect(await database.db.system((tx) => analyzeNeverAnalyzed(tx))).toEqual([]);
    expect(await lastAnalyze('assets')).toBeNull();
  });

  it('analyzes a planned table changed in bulk and never analyzed, once', async () => {
    await insertAssets(200, 'BULK-');
    expect(await database.db.system((tx) => analyzeNeverAnalyzed(tx))).toEqual(['assets']);
    expect(await lastAnalyze('assets')).not.toBeNull();
    const planned = await database.db.system(async (tx) => {
      const { rows } = await tx.query<{ n: number }>(
        "SELECT reltuples::int AS n FROM pg_class WHERE oid = 'assets'::regclass",
      );
      return rows[0]!.n;
    });
    expect(planned).toBe(210);
    // Analyzed once: more rows are autovacuum's to notice, not this pass's.
    await insertAssets(200, 'MORE-');
    expect(await database.db.system((tx) => analyzeNeverAnalyzed(tx))).toEqual([]);
  });
});
