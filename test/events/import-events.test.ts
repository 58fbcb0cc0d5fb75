/**
 * A spreadsheet import's writes are master-data events too, recorded in the import's
 * transaction with the resource as the API returns it afterwards (docs/events.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { unique } from '../ingest/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t?.close();
});

async function eventsOf(orgId: number) {
  const { rows } = await t.database.db.pool.query<{
    type: string;
    subject: string;
    location_ids: number[];
    payload: Record<string, unknown>;
  }>(
    `SELECT type, subject, location_ids::int[] AS location_ids, payload FROM events
     WHERE org_id = $1 ORDER BY id`,
    [orgId],
  );
  return rows;
}

describe('import events', () => {
  it('assets created and changed by an import are asset.created / asset.updated; unchanged and refused rows are none', async () => {
    const org = await t.createOrg(unique('imp'));
    const sheets = t.services.internal.spreadsheets;
    const first = await sheets.import(
      cliCaller(org.id),
      'assets',
      ['external_key,name,description,tags\r\n', 'A-1,Crate,,rfid:E1;barcode:B1\r\n', 'A-2,Cart,,\r\n'].join(
        '',
      ),
    );
    expect(first).toMatchObject({ applied: true, created: 2 });
    const created = await eventsOf(org.id);
    expect(created.map((e) => e.type)).toEqual(['asset.created', 'asset.created']);
    const crate = await t.services.assets.get(org.id, Number(created[0]!.subject.split(':')[1]));
    expect(created[0]!.payload).toEqual(crate);
    expect((crate.tags as unknown[]).length).toBe(2);

    // A-1 renamed, A-2 unchanged, a bad row refused: one event.
    const second = await sheets.import(
      cliCaller(org.id),
      'assets',
      [
        'external_key,name,description,tags\r\n',
        'A-1,Big crate,,rfid:E1;barcode:B1\r\n',
        'A-2,Cart,,\r\n',
        'A-3,,,\r\n',
      ].join(''),
    );
    expect(second).toMatchObject({ applied: true, changed: 1, unchanged: 1, refused: 1 });
    const after = await eventsOf(org.id);
    expect(after.map((e) => e.type)).toEqual(['asset.created', 'asset.created', 'asset.updated']);
    expect(after[2]!.payload).toEqual(await t.services.assets.get(org.id, crate.id));
    expect(after[2]!.payload.name).toBe('Big crate');
  });

  it('locations created by an import are location.created, each for its own subtree filter', async () => {
    const org = await t.createOrg(unique('imp'));
    const result = await t.services.internal.spreadsheets.import(
      cliCaller(org.id),
      'locations',
      ['external_key,name,parent_external_key\r\n', 'SITE,Site,\r\n', 'DOCK,Dock,SITE\r\n'].join(''),
    );
    expect(result).toMatchObject({ applied: true, created: 2 });
    const events = await eventsOf(org.id);
    expect(events.map((e) => e.type)).toEqual(['location.created', 'location.created']);
    const dock = events.find((e) => e.payload.external_key === 'DOCK')!;
    expect(dock.payload).toMatchObject({ name: 'Dock', parent_external_key: 'SITE' });
    expect(dock.location_ids).toEqual([dock.payload.id]);
  });

  it('a dry run records nothing', async () => {
    const org = await t.createOrg(unique('imp'));
    const dry = await t.services.internal.spreadsheets.import(
      cliCaller(org.id),
      'assets',
      'external_key,name\r\nD-1,Dry\r\n',
      { dryRun: true },
    );
    expect(dry).toMatchObject({ applied: false, created: 1 });
    expect(await eventsOf(org.id)).toEqual([]);
  });
});
