/**
 * The list's total_count without filters (or with is_active only) comes from counted
 * delta rows (migration 0054) less the assets outside their validity window, not from a
 * count of every row. Whatever statements change the assets, and whenever the compactor
 * folds the rows, that total equals counting the list's predicate directly.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactAssetCounts } from '../../src/assets/count-compactor.js';
import { type AssetListFilter, buildAssetListSql } from '../../src/assets/repository-list.js';
import { EFFECTIVE } from '../../src/master-data/list-query.js';
import { bearer, buildTestApp, type TestApp, type TestOrg } from '../helpers/app.js';

const base: AssetListFilter = { includeDeleted: false, sort: [], limit: 1, offset: 0 };

/** A window relative to now: current, future-dated, expired, or current with an end ahead. */
const WINDOWS = {
  current: [`now() - interval '1 day'`, 'NULL'],
  future: [`now() + interval '1 day'`, 'NULL'],
  expired: [`now() - interval '2 days'`, `now() - interval '1 day'`],
  ending: [`now() - interval '1 day'`, `now() + interval '1 day'`],
} as const;
type Window = keyof typeof WINDOWS;

const windowArb = fc.constantFrom<Window>('current', 'future', 'expired', 'ending');
const op = fc.oneof(
  fc.record({
    kind: fc.constant('insert' as const),
    rows: fc.array(fc.record({ active: fc.boolean(), deleted: fc.boolean(), window: windowArb }), {
      minLength: 1,
      maxLength: 6,
    }),
  }),
  fc.record({ kind: fc.constant('toggle' as const), pick: fc.nat(), every: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ kind: fc.constant('softDelete' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('restore' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('hardDelete' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('rewindow' as const), pick: fc.nat(), window: windowArb }),
  fc.record({ kind: fc.constant('rename' as const), pick: fc.nat() }),
  fc.constant({ kind: 'compact' as const }),
);
type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

describe('total_count from counted rows', () => {
  let t: TestApp;
  let org: TestOrg;
  let other: TestOrg;
  let serial = 0;

  beforeAll(async () => {
    t = await buildTestApp();
    org = await t.createOrg();
    other = await t.createOrg();
  });
  afterAll(() => t?.close());

  const sql = (text: string, values: unknown[] = []) => t.database.db.pool.query(text, values);

  /** One statement per operation, as the owner: triggers see what a bulk writer would do. */
  async function apply(orgId: number, o: Op) {
    const oneOf = `(SELECT id FROM assets WHERE org_id = $1 ORDER BY id OFFSET $2 % greatest(1, (SELECT count(*) FROM assets WHERE org_id = $1)) LIMIT 1)`;
    switch (o.kind) {
      case 'insert': {
        const values = o.rows.map((r) => {
          const [from, to] = WINDOWS[r.window];
          serial++;
          return `($1, 'CNT-${serial}', 'Counted ${serial}', ${r.active}, ${from}, ${to}, ${r.deleted ? 'now()' : 'NULL'})`;
        });
        await sql(
          `INSERT INTO assets (org_id, external_key, name, is_active, valid_from, valid_to, deleted_at) VALUES ${values.join(', ')}`,
          [orgId],
        );
        return;
      }
      case 'toggle':
        await sql('UPDATE assets SET is_active = NOT is_active WHERE org_id = $1 AND id % $2 = 0', [
          orgId,
          o.every,
        ]);
        return;
      case 'softDelete':
        await sql(`UPDATE assets SET deleted_at = now() WHERE id = ${oneOf}`, [orgId, o.pick]);
        return;
      case 'restore':
        await sql(`UPDATE assets SET deleted_at = NULL WHERE id = ${oneOf}`, [orgId, o.pick]);
        return;
      case 'hardDelete':
        await sql(`DELETE FROM assets WHERE id = ${oneOf}`, [orgId, o.pick]);
        return;
      case 'rewindow': {
        const [from, to] = WINDOWS[o.window];
        await sql(`UPDATE assets SET valid_from = ${from}, valid_to = ${to} WHERE id = ${oneOf}`, [
          orgId,
          o.pick,
        ]);
        return;
      }
      case 'rename':
        await sql(`UPDATE assets SET name = name || '.' WHERE id = ${oneOf}`, [orgId, o.pick]);
        return;
      case 'compact':
        await t.database.db.system(compactAssetCounts);
        return;
    }
  }

  async function totals(orgId: number) {
    const out: Record<string, [number, number]> = {};
    for (const isActive of [undefined, true, false]) {
      const filter = { ...base, isActive };
      const counted = await t.database.db.readWithOrg(orgId, async (tx) => {
        const { rows } = await tx.query<{ total: number }>(buildAssetListSql(orgId, filter).count);
        return rows[0]!.total;
      });
      const direct = await sql(
        `SELECT count(*)::int AS n FROM assets a WHERE a.org_id = $1 AND a.deleted_at IS NULL AND ${EFFECTIVE('a')}
         ${isActive === undefined ? '' : `AND a.is_active = ${isActive}`}`,
        [orgId],
      );
      out[String(isActive)] = [counted, direct.rows[0].n];
    }
    return out;
  }

  it('uses the counted rows only where the predicate is the live, effective assets', () => {
    expect(buildAssetListSql(1, base).count.text).toContain('asset_count_deltas');
    expect(buildAssetListSql(1, { ...base, isActive: false }).count.text).toContain('asset_count_deltas');
    for (const f of [
      { includeDeleted: true },
      { searchPattern: '%ab%' },
      { externalKeys: ['A'] },
      { locationIds: [1] },
      { locationKeys: ['L'] },
    ]) {
      expect(buildAssetListSql(1, { ...base, ...f }).count.text).not.toContain('asset_count_deltas');
    }
  });

  it('equals counting the predicate after any sequence of writes and folds', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        for (const o of ops) {
          await apply(org.id, o);
          // Another organization's writes never move this one's total.
          if (o.kind === 'insert') await apply(other.id, o);
        }
        for (const [counted, direct] of Object.values(await totals(org.id))) expect(counted).toBe(direct);
        for (const [counted, direct] of Object.values(await totals(other.id))) expect(counted).toBe(direct);
      }),
      { numRuns: 25 },
    );
  });

  it('answers total_count through the API as before, with folds and concurrent writers', async () => {
    const fresh = await t.createOrg();
    const key = await fresh.key(['assets:read', 'assets:write']);
    const list = async (query = '') =>
      (
        await t.app.inject({
          method: 'GET',
          url: `/api/v1/assets?limit=1${query}`,
          headers: bearer(key.token),
        })
      ).json().total_count as number;
    const creates = Array.from({ length: 12 }, (_, i) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/assets',
        headers: bearer(key.token),
        payload: { external_key: `API-${i}`, name: `Api ${i}`, is_active: i % 3 !== 0 },
      }),
    );
    expect((await Promise.all(creates)).map((r) => r.statusCode)).toEqual(Array(12).fill(201));
    expect(await list()).toBe(12);
    expect(await list('&is_active=false')).toBe(4);
    await t.database.db.system(compactAssetCounts);
    expect(await list()).toBe(12);
    const first = (
      await t.app.inject({ method: 'GET', url: '/api/v1/assets?limit=1', headers: bearer(key.token) })
    ).json().data[0].id as number;
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/assets/${first}`,
      headers: bearer(key.token),
    });
    expect(del.statusCode).toBe(204);
    expect(await list()).toBe(11);
    expect(await list('&include_deleted=true')).toBe(12);
  });
});
