/**
 * The export reads every page on one snapshot: rows created or deleted while it runs do not
 * shift the pages, so every row live for the whole export is in it exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import { type SheetFixture, sheetFixture } from './helpers.js';

const ROWS = 2500;
const key = (i: number) => `SNAP-${String(i).padStart(5, '0')}`;

describe('asset export under concurrent changes', { timeout: 60_000 }, () => {
  let f: SheetFixture;
  beforeAll(async () => {
    f = await sheetFixture();
    const lines = Array.from({ length: ROWS }, (_, i) => `${key(i)},Asset ${i}`);
    const result = await f.importCsv('assets', `external_key,name\n${lines.join('\n')}\n`);
    expect(result.created).toBe(ROWS);
  });
  afterAll(() => f.t.close());

  it('lists every row live throughout exactly once when rows are deleted and created mid-export', async () => {
    const lines = f.t.services.internal.spreadsheets.exportAssets(f.org.id, {
      include_deleted: false,
      sort: 'external_key',
    });
    let out = '';
    // The header and the first page (1,000 rows) are out before anything changes.
    while (out.split('\r\n').length - 1 < 1001) {
      const next = await lines.next();
      if (next.done) throw new Error('export ended early');
      out += next.value;
    }
    const gone = Array.from({ length: 200 }, (_, i) => key(i));
    await f.t.database.db.withOrg(cliCaller(f.org.id), async (tx) => {
      await tx.query('UPDATE assets SET deleted_at = now_ms() WHERE org_id = $1 AND external_key = ANY($2)', [
        f.org.id,
        gone,
      ]);
      await tx.query(
        `INSERT INTO assets (org_id, external_key, name, tag_values)
         SELECT $1, 'SNAP-0' || g, 'new', '' FROM generate_series(1, 50) g`,
        [f.org.id],
      );
    });
    for await (const chunk of lines) out += chunk;
    const keys = out
      .split('\r\n')
      .slice(1, -1)
      .map((l) => l.split(',')[0]!);
    const counts = new Map<string, number>();
    for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
    for (let i = 200; i < ROWS; i++) expect(counts.get(key(i)), key(i)).toBe(1);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  });

  it('ends its transaction when the download stops early', async () => {
    const lines = f.t.services.internal.spreadsheets.exportAssets(f.org.id, { include_deleted: false });
    expect((await lines.next()).done).toBe(false);
    await lines.return(undefined);
    const open = await f.t.database.db.pool.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND state LIKE 'idle in transaction%' AND backend_xmin IS NOT NULL`,
    );
    expect(open.rows[0].n).toBe(0);
  });
});
