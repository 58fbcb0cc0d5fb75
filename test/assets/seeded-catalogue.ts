/**
 * Two organizations of assets as bench/seed-assets.sql writes them (keys FL-nnnnnnn, every
 * tenth of the first placed at its location DOCK-1): the statement tests of asset lists
 * compare their plans and answers on it.
 */
import { readFile } from 'node:fs/promises';
import type pg from 'pg';
import type { TestApp, TestOrg } from '../helpers/app.js';
import { settleTables, withSeedClient } from '../helpers/database.js';

export interface SeededCatalogue {
  org: TestOrg;
  other: TestOrg;
  /** DOCK-1, the first organization's location. */
  locationId: number;
}

export async function seedCatalogue(
  t: TestApp,
  options: {
    names: [string, string];
    /** Assets of the first organization and of the second (unplaced). */
    counts: [number, number];
    /** More seeding on the same client before the tables settle. */
    more?: (c: pg.Client, seeded: SeededCatalogue) => Promise<void>;
    /** Tables to settle beside assets and asset_positions. */
    settle?: string[];
  },
): Promise<SeededCatalogue> {
  const org = await t.createOrg(options.names[0]);
  const other = await t.createOrg(options.names[1]);
  const seed = await readFile(new URL('../../bench/seed-assets.sql', import.meta.url), 'utf8');
  const locationId = (
    await t.database.db.pool.query<{ id: number }>(
      "INSERT INTO locations (org_id, external_key, name) VALUES ($1, 'DOCK-1', 'Dock 1') RETURNING id",
      [org.id],
    )
  ).rows[0]!.id;
  const seeded = { org, other, locationId };
  await withSeedClient(t.database.url, async (c) => {
    await c.query(seed, [org.id, 1, options.counts[0], locationId]);
    await c.query(seed, [other.id, 1, options.counts[1], null]);
    await options.more?.(c, seeded);
    await settleTables(c, ['assets', 'asset_positions', ...(options.settle ?? [])]);
  });
  return seeded;
}
