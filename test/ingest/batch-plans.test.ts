/**
 * Ingest's statements find thousands of rows by key at once; their cost must follow the
 * batch, not the table. The trap (docs/ingest-history.md, "Plans at 100,000 assets"): a stays table
 * that grew since its last ANALYZE, where the planner joined a batch's keys to the stays by
 * hashing every stay of the organization. Ingest's transactions open with KEYED_BATCHES;
 * checked here on the plan's row counts (EXPLAIN ANALYZE, as the restricted role), not on
 * time, and on what the service sends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYED_BATCHES } from '../../src/db/app-connection.js';
import { int8Array, textArray, timestampArray } from '../../src/db/binary-arrays.js';
import type { Database, Tx } from '../../src/db/pool.js';
import { IngestService } from '../../src/ingest/service.js';
import { EXTEND_STAYS } from '../../src/tracking/repository.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import {
  describePlan,
  explainedRoot,
  nodesOf,
  type PlanNode,
  rowsHandled,
  rowsRead,
} from '../helpers/plan-nodes.js';
import { genericJson, ingestFixture, iso, readerRef, unique } from './helpers.js';

const ASSETS = 20_000;
const BATCH = 2_000;

let t: TestApp;
let orgId: number;
/** The site's assets and their one stay's key (started_at as the server writes it). */
let stays: Array<{ assetId: number; key: string }>;

beforeAll(async () => {
  t = await buildTestApp();
  const f = await ingestFixture(t);
  orgId = f.orgId;
  const dock = await f.location();
  const pool = t.database.db.pool;
  const prefix = unique('BP');
  await pool.query(
    `WITH a AS (
       INSERT INTO assets (org_id, external_key, name, valid_from)
       SELECT $1, $2 || '-' || i, 'Asset ' || i, now() - interval '1 day' FROM generate_series(1, $3) i
       RETURNING id)
     INSERT INTO tags (org_id, tag_type, value, asset_id) SELECT $1, 'rfid', 'E2' || lpad(to_hex(id), 22, '0'), id FROM a`,
    [orgId, prefix, ASSETS],
  );
  // Statistics taken while this database had no stays, and kept so: the table then grows
  // as a new site's does in its first hour, before autovacuum analyzes it.
  await pool.query('ANALYZE');
  await pool.query('ALTER TABLE stays SET (autovacuum_enabled = off)');
  stays = await stayAtOnePlace(orgId, dock);
}, 120_000);
afterAll(() => t?.close());

/** One stay for every asset of the organization, at `location`; their keys. */
async function stayAtOnePlace(
  org: number,
  location: number,
): Promise<Array<{ assetId: number; key: string }>> {
  const { rows } = await t.database.db.pool.query<{ asset_id: number; key: string }>(
    `INSERT INTO stays (org_id, asset_id, location_id, started_at, last_seen_at)
     SELECT $1, id, $2, now() - interval '1 hour', now() - interval '1 hour' FROM assets WHERE org_id = $1
     RETURNING asset_id, started_at::text AS key`,
    [org, location],
  );
  return rows.map((r) => ({ assetId: Number(r.asset_id), key: r.key }));
}

/** The plan of extending the stays of `size` assets spread over the site, as one of ingest's batches. */
async function extendPlan(settings: string | null, size = BATCH, site = { orgId, stays }): Promise<PlanNode> {
  const batch = site.stays.filter((_, i) => i % (site.stays.length / size) === 0);
  expect(batch).toHaveLength(size);
  return t.database.db.withOrg(site.orgId, async (tx) => {
    if (settings) await tx.query(settings);
    const { rows } = await tx.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${EXTEND_STAYS}`, [
      site.orgId,
      int8Array(batch.map((s) => s.assetId)),
      textArray(batch.map((s) => s.key)),
      timestampArray(batch.map(() => Date.now())),
    ]);
    // Not kept: the EXPLAIN ran the update.
    await tx.query('ROLLBACK');
    return explainedRoot(rows);
  });
}

describe('the plans of a batch of keys', () => {
  it('read the stays the batch names, with statistics older than the table', async () => {
    const plan = await extendPlan(KEYED_BATCHES);
    // Each key's stay found by one probe of the primary key, then fetched by its row
    // address to be updated: two reads of stays per key, whatever the table holds.
    expect(rowsRead(plan, 'stays'), describePlan(plan)).toBe(2 * BATCH);
    expect(nodesOf(plan).map((n) => n['Node Type'])).not.toContain('Hash Join');
  });

  it('do so without KEYED_BATCHES too: the statement probes key by key whatever the planner estimates', async () => {
    // Before the probes were a LATERAL subquery, this plan hashed every stay of the
    // organization (docs/ingest-history.md, "Plans at 100,000 assets"), and only the settings kept
    // it from doing so.
    const plan = await extendPlan(null);
    expect(rowsRead(plan, 'stays'), describePlan(plan)).toBe(2 * BATCH);
  });
});

describe("the plans of a new site's batches", () => {
  // A site whose stays came after the last ANALYZE: the statistics know only the other
  // organizations, so they put this one's stays at a row or two. The planner then read
  // them all once and compared each with every key of the batch (a nested loop over a
  // materialized side): 400 ms for 431 keys against 4,268 stays in bench:ingest, growing
  // with the product of the two.
  it('read the stays the batch names, however few the statistics think the site has', async () => {
    await t.database.db.pool.query('ANALYZE stays');
    const f = await ingestFixture(t);
    const dock = await f.location();
    await t.database.db.pool.query(
      `INSERT INTO assets (org_id, external_key, name, valid_from)
       SELECT $1, 'NEW-' || i, 'Asset ' || i, now() - interval '1 day' FROM generate_series(1, 5000) i`,
      [f.orgId],
    );
    const site = { orgId: f.orgId, stays: await stayAtOnePlace(f.orgId, dock) };
    for (const size of [50, 500]) {
      const plan = await extendPlan(KEYED_BATCHES, size, site);
      // Linear in the batch: every node handles each key a few times at most.
      expect(rowsHandled(plan), describePlan(plan)).toBeLessThan(size * 20);
      expect(rowsRead(plan, 'stays'), describePlan(plan)).toBe(2 * size);
    }
  }, 60_000);
});

describe('ingest transactions', () => {
  it('open with KEYED_BATCHES, reader messages and handheld records alike', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const tag = 'E2000000000000000000BB01';
    const asset = await f.asset(tag);
    const { reader } = await f.reader('generic-json', [[1, dock]]);
    const firsts: string[] = [];
    const db = t.database.db;
    const recording: Database = {
      ...db,
      withOrg: (scope, fn) =>
        db.withOrg(scope, (tx: Tx) => {
          const query = tx.query;
          let first = true;
          tx.query = ((...args: Parameters<Tx['query']>) => {
            if (first)
              firsts.push(typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text);
            first = false;
            return (query as (...a: unknown[]) => unknown).apply(tx, args);
          }) as Tx['query'];
          return fn(tx).finally(() => {
            tx.query = query;
          });
        }),
    };
    const ingest = new IngestService(recording);
    const outcome = await ingest.readerMessage(
      readerRef(reader),
      genericJson([[tag, 1, iso(Date.now() - 1000)]]),
      'mqtt',
    );
    expect(outcome).toMatchObject({ good: 1 });
    await ingest.records(
      f.orgId,
      [{ asset: { id: asset }, location: { id: dock }, observedAt: Date.now() }],
      'handheld',
      '{}',
    );
    expect(firsts).toEqual([KEYED_BATCHES, KEYED_BATCHES]);
  });
});
