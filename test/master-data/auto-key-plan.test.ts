/**
 * The lowest free auto-key slot (src/master-data/auto-key.ts, slotChoice) is found by
 * probing the slot index, whatever the statistics say. The statistics of a table are
 * those of its last ANALYZE: an organization that loaded its assets under keys of its own
 * and then created thousands without a key before the next one (autovacuum runs it after a
 * tenth of the table has changed; on a server where it is off, never) had its keyless
 * creates read the whole table, twice, under the keyspace lock. The plans as they run are
 * checked in that state, and the answer against the rule for any slots held; so is what an
 * import's batch of keyless rows reads to find its slots (src/spreadsheet/auto-keys.ts).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  autoKeyPrefix,
  formatAutoKey,
  type KeyedTable,
  nextAutoKey,
  slotChoice,
} from '../../src/master-data/auto-key.js';
import { freeSlotsSql } from '../../src/spreadsheet/auto-keys.js';
import {
  createTestDatabase,
  insertOrganization,
  type TestDatabase,
  withSeedClient,
} from '../helpers/database.js';
import { describePlan, explainedRoot, nodesOf, type PlanNode, rowsRead } from '../helpers/plan-nodes.js';

const OWN_KEYS = 2_000;
const AUTO_KEYS = 8_000;

describe('choosing the lowest free auto-key slot', () => {
  let d: TestDatabase;
  let orgId: number;

  beforeAll(async () => {
    d = await createTestDatabase();
    orgId = await insertOrganization(d.db, 'Keys');
    await withSeedClient(d.url, async (c) => {
      // The state this file is about must hold while it runs: no autovacuum in between.
      await c.query('ALTER TABLE assets SET (autovacuum_enabled = false)');
      await c.query(
        `INSERT INTO assets (org_id, external_key, name)
         SELECT $1, 'OWN-' || g, 'Own ' || g FROM generate_series(1, $2::int) g`,
        [orgId, OWN_KEYS],
      );
      await c.query('VACUUM ANALYZE assets');
      // Then the keyless creates: slots 1..AUTO_KEYS, all held, and the watermark at the top.
      await c.query(
        `INSERT INTO assets (org_id, external_key, name)
         SELECT $1, 'ASSET-' || CASE WHEN g < 10000 THEN lpad(g::text, 4, '0') ELSE g::text END, 'Auto ' || g
         FROM generate_series(1, $2::int) g`,
        [orgId, AUTO_KEYS],
      );
      await c.query(`INSERT INTO auto_key_watermarks (org_id, kind, dense_upto) VALUES ($1, 'assets', $2)`, [
        orgId,
        AUTO_KEYS,
      ]);
    });
  }, 120_000);
  afterAll(() => d?.drop());

  /**
   * The statement's plan as it ran, custom or generic, in the organization's transaction
   * (row-level security as the service has it); rolled back, since running it moves the
   * watermark.
   */
  async function executedPlan(mode: 'force_custom_plan' | 'force_generic_plan'): Promise<PlanNode> {
    let plan: PlanNode | undefined;
    const done = new Error('rolled back');
    await d.db
      .withOrg(orgId, async (tx) => {
        await tx.query(`PREPARE slot_choice AS WITH ${slotChoice('assets')} SELECT slot FROM found`);
        await tx.query(`SET LOCAL plan_cache_mode = ${mode}`);
        const { rows } = await tx.query(
          `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE slot_choice(${orgId}, 'assets')`,
        );
        plan = explainedRoot(rows);
        await tx.query('DEALLOCATE slot_choice');
        throw done;
      })
      .catch((err) => {
        if (err !== done) throw err;
      });
    return plan!;
  }

  it.each(['force_custom_plan', 'force_generic_plan'] as const)(
    'under %s it probes the slot index once and reads nothing else of the table',
    async (mode) => {
      const root = await executedPlan(mode);
      const ran = nodesOf(root).filter((n) => (n['Actual Loops'] ?? 0) > 0);
      const onAssets = ran.filter((n) => n['Relation Name'] === 'assets');
      expect(onAssets.length, describePlan(root)).toBe(1);
      expect(onAssets[0]!['Node Type'], describePlan(root)).toMatch(/^Index (Only )?Scan$/);
      expect(onAssets[0]!['Index Name'], describePlan(root)).toBe('assets_auto_slot');
      expect(onAssets[0]!['Actual Loops'], describePlan(root)).toBe(1);
      // A probe: not a read of every slot (as a hash of them would be).
      expect(onAssets[0]!['Actual Rows'], describePlan(root)).toBeLessThanOrEqual(1);
    },
  );

  it("an import's free slots read only the slots above the watermark", async () => {
    const root = await d.db.withOrg(orgId, async (tx) => {
      const { rows } = await tx.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${freeSlotsSql('assets')}`, [
        orgId,
        AUTO_KEYS,
        500,
      ]);
      return explainedRoot(rows);
    });
    // Nothing is held above the watermark: not the organization's 8,000 slots below it.
    expect(rowsRead(root, 'assets'), describePlan(root)).toBe(0);
  });

  it('takes the slot above the watermark and moves the watermark to it', async () => {
    const key = await d.db.withOrg(orgId, (tx) => nextAutoKey(tx, 'assets', orgId));
    expect(key).toBe(formatAutoKey('assets', AUTO_KEYS + 1));
    const { rows } = await d.db.pool.query(
      `SELECT dense_upto FROM auto_key_watermarks WHERE org_id = $1 AND kind = 'assets'`,
      [orgId],
    );
    expect(rows[0].dense_upto).toBe(AUTO_KEYS + 1);
  });

  // Slots 1..40 held at random (by live rows; deleted rows hold none) and a watermark at or
  // below the top of the run of held slots from 1, as the service keeps it: the choice is
  // the lowest slot no live row holds, and the watermark moves to it.
  it('chooses the lowest slot no live row holds, for any slots held above the watermark', async () => {
    const scenario = fc
      .tuple(
        fc.uniqueArray(fc.integer({ min: 1, max: 40 }), { maxLength: 40 }),
        fc.uniqueArray(fc.integer({ min: 1, max: 40 }), { maxLength: 5 }),
        fc.nat(),
        fc.constantFrom<KeyedTable>('assets', 'locations'),
      )
      .map(([held, deleted, markSeed, table]) => {
        const live = new Set(held);
        let dense = 0;
        while (live.has(dense + 1)) dense++;
        const deletedOnly = deleted.filter((s) => !live.has(s));
        return { live: [...live], deletedOnly, mark: markSeed % (dense + 1), table };
      });
    await fc.assert(
      fc.asyncProperty(scenario, async ({ live, deletedOnly, mark, table }) => {
        const org = await insertOrganization(d.db, 'Slots');
        await d.db.pool.query(
          `INSERT INTO ${table} (org_id, external_key, name, deleted_at)
           SELECT $1, $2 || lpad(s::text, 4, '0'), 'Slot ' || s, CASE WHEN gone THEN now() END
           FROM unnest($3::int[], $4::bool[]) AS v(s, gone)`,
          [
            org,
            autoKeyPrefix(table),
            [...live, ...deletedOnly],
            [...live.map(() => false), ...deletedOnly.map(() => true)],
          ],
        );
        await d.db.pool.query(
          'INSERT INTO auto_key_watermarks (org_id, kind, dense_upto) VALUES ($1, $2, $3)',
          [org, table, mark],
        );
        let lowest = 1;
        while (live.includes(lowest)) lowest++;
        const key = await d.db.withOrg(org, (tx) => nextAutoKey(tx, table, org));
        expect(key).toBe(formatAutoKey(table, lowest));
        const { rows } = await d.db.pool.query(
          'SELECT dense_upto FROM auto_key_watermarks WHERE org_id = $1 AND kind = $2',
          [org, table],
        );
        expect(rows[0].dense_upto).toBe(lowest);
      }),
      { numRuns: 60 },
    );
  });
});
