/**
 * Asset import: upsert by external_key, dry run, refused rows with the API's codes,
 * auto keys, all-or-nothing, and organizations kept apart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import { bearer } from '../helpers/app.js';
import { codesOf, type SheetFixture, sheetFixture, uniq } from './helpers.js';

const HEADER = 'external_key,name,description,is_active,metadata,tags,valid_from,valid_to\n';

describe('asset import', () => {
  let f: SheetFixture;
  beforeAll(async () => {
    f = await sheetFixture();
  });
  afterAll(() => f.t.close());

  const count = async () =>
    (await f.t.database.db.withOrg(f.org.id, (tx) => tx.query('SELECT count(*)::int AS n FROM assets')))
      .rows[0].n;

  it('creates, then updates only what changed, and leaves identical rows untouched', async () => {
    const k1 = uniq('IMP');
    const k2 = uniq('IMP');
    const first = await f.importCsv(
      'assets',
      `${HEADER}${k1},Pump,"Main pump, hall 2",true,"{""color"":""red""}",rfid:${k1}-R;barcode:${k1}-B,,\n${k2},Valve,,false,,,2030-01-01T00:00:00Z,\n`,
    );
    expect(first).toMatchObject({ applied: true, created: 2, changed: 0, unchanged: 0, refused: 0 });
    const res = await f.api('GET', `/api/v1/assets?external_key=${k1}`);
    const a = res.json.data[0];
    expect(a).toMatchObject({
      name: 'Pump',
      description: 'Main pump, hall 2',
      is_active: true,
      metadata: { color: 'red' },
    });
    expect(a.tags.map((t: { tag_type: string; value: string }) => `${t.tag_type}:${t.value}`)).toEqual([
      `rfid:${k1}-R`,
      `barcode:${k1}-B`,
    ]);

    const second = await f.importCsv(
      'assets',
      `${HEADER}${k1},Pump 2,"Main pump, hall 2",true,"{""color"":""red""}",barcode:${k1}-B;ble:${k1}-N,,\n${k2},Valve,,false,,,2030-01-01T00:00:00.000Z,\n`,
    );
    expect(second).toMatchObject({ created: 0, changed: 1, unchanged: 1, refused: 0 });
    expect(second.results[0]).toMatchObject({ outcome: 'update', changed: ['name', 'tags'] });
    const after = (await f.api('GET', `/api/v1/assets/${a.id}`)).json.data;
    expect(after.name).toBe('Pump 2');
    expect(after.updated_at > a.updated_at).toBe(true);
    expect(after.tags.map((t: { value: string }) => t.value).sort()).toEqual([`${k1}-B`, `${k1}-N`]);
    // The detached tag is free again, and q finds the new tag value.
    const found = await f.api('GET', `/api/v1/assets?q=${k1}-N`);
    expect(found.json.data.map((x: { id: number }) => x.id)).toEqual([a.id]);
  });

  it('leaves columns that are not in the header alone', async () => {
    const key = uniq('IMP');
    await f.importCsv('assets', `${HEADER}${key},Crate,Wooden,true,"{""a"":1}",rfid:${key},,\n`);
    const result = await f.importCsv('assets', `external_key,name\n${key},Crate 2\n`);
    expect(result.results[0]).toMatchObject({ outcome: 'update', changed: ['name'] });
    const a = (await f.api('GET', `/api/v1/assets?external_key=${key}`)).json.data[0];
    expect(a).toMatchObject({ name: 'Crate 2', description: 'Wooden', metadata: { a: 1 } });
    expect(a.tags).toHaveLength(1);
  });

  it('a dry run decides every row but writes nothing', async () => {
    const key = uniq('DRY');
    const before = await count();
    const result = await f.importCsv(
      'assets',
      `${HEADER}${key},Dry,,,,rfid:${key},,\n,No key,,,,,,\n,,,,,,,\n`,
      {
        dryRun: true,
      },
    );
    expect(result).toMatchObject({ dry_run: true, applied: false, created: 2, refused: 1 });
    expect(await count()).toBe(before);
    const tags = await f.t.database.db.withOrg(f.org.id, (tx) =>
      tx.query('SELECT 1 FROM tags WHERE value = $1', [key]),
    );
    expect(tags.rowCount).toBe(0);
  });

  it('refuses rows with the codes the API answers for the same body', async () => {
    const taken = uniq('TAKEN');
    await f.api('POST', '/api/v1/assets', { name: 'Holder', tags: [{ tag_type: 'rfid', value: taken }] });
    const rows: [string, Record<string, unknown>][] = [
      [`${uniq('R')},Bad\u0001Name,,,,,,`, { name: 'Bad\u0001Name' }],
      [`bad key!,Name,,,,,,`, { name: 'Name', external_key: 'bad key!' }],
      [`${uniq('R')},Name,,,,nfc:X1,,`, { name: 'Name', tags: [{ tag_type: 'nfc', value: 'X1' }] }],
      [`${uniq('R')},Name,,,,X2,,`, { name: 'Name', tags: [{ value: 'X2' }] }],
      [
        `${uniq('R')},Name,,,,,2030-01-02T00:00:00Z,2030-01-01T00:00:00Z`,
        { name: 'Name', valid_from: '2030-01-02T00:00:00Z', valid_to: '2030-01-01T00:00:00Z' },
      ],
      [`${uniq('R')},Name,,,,,1970-01-01T00:00:00Z,`, { name: 'Name', valid_from: '1970-01-01T00:00:00Z' }],
      [`${uniq('R')},Name,,,,,2030-01-01,`, { name: 'Name', valid_from: '2030-01-01' }],
      [`${uniq('R')},Name,,maybe,,,,`, { name: 'Name', is_active: 'maybe' }],
      [`${uniq('R')},Name,,,"[1,2]",,,`, { name: 'Name', metadata: [1, 2] }],
      [`${uniq('R')},,,,,,,`, {}],
      [`${uniq('R')},Name,,,,rfid:,,`, { name: 'Name', tags: [{ tag_type: 'rfid', value: '' }] }],
    ];
    const result = await f.importCsv('assets', HEADER + rows.map(([line]) => line).join('\n'));
    expect(result.refused).toBe(rows.length);
    for (const [i, [, body]] of rows.entries()) {
      const api = await f.api('POST', '/api/v1/assets', body);
      expect(api.status, JSON.stringify(body)).toBe(400);
      const apiCodes = api.json.error.fields.map((e: { field: string; code: string }) => [e.field, e.code]);
      expect(codesOf(result, i + 2), JSON.stringify(body)).toEqual(apiCodes);
    }

    const conflicts = await f.importCsv(
      'assets',
      `${HEADER}${uniq('R')},Name,,,,rfid:${taken},,\n${uniq('R')},Name,,,,rfid:D;rfid:D,,\n`,
    );
    for (const row of [2, 3]) expect(codesOf(conflicts, row)).toEqual([['tags', 'conflict']]);
    const api = await f.api('POST', '/api/v1/assets', {
      name: 'N',
      tags: [{ tag_type: 'rfid', value: taken }],
    });
    expect(api.status).toBe(409);
  });

  it('takes another spelling of an RFID tag for the same tag: refused where another record holds it or another row takes it, a respelling of its own kept', async () => {
    let n = 0;
    const epc = (p: string) => `E280${p}${process.pid}${n++}`;
    const [held, own, twice, rows] = [epc('A'), epc('B'), epc('C'), epc('D')];
    await f.api('POST', '/api/v1/assets', { name: 'Holder', tags: [{ tag_type: 'rfid', value: held }] });
    const ownKey = uniq('OWN');
    await f.importCsv('assets', `${HEADER}${ownKey},Own,,,,rfid:${own},,\n`);
    const result = await f.importCsv(
      'assets',
      `${HEADER}${uniq('R')},Name,,,,rfid:0${held.toLowerCase()},,\n` +
        `${uniq('R')},Name,,,,rfid:${twice};rfid:${twice.toLowerCase()},,\n` +
        `${uniq('R')},Name,,,,rfid:${rows},,\n${uniq('R')},Name,,,,rfid:00${rows},,\n` +
        `${ownKey},Own,,,,rfid:${own.toLowerCase()},,\n`,
    );
    for (const row of [2, 3, 5]) expect(codesOf(result, row)).toEqual([['tags', 'conflict']]);
    expect(result).toMatchObject({ created: 1, changed: 1, refused: 3 });
    const mine = await f.api('GET', `/api/v1/assets?external_key=${ownKey}`);
    expect(mine.json.data[0].tags.map((t: { value: string }) => t.value)).toEqual([own.toLowerCase()]);
  });

  it('refuses a key twice in one file, a tag on two rows, and unreadable rows, and writes the rest', async () => {
    const key = uniq('TWICE');
    const tag = uniq('TAG');
    const ok = uniq('OK');
    const bytes = Buffer.concat([
      Buffer.from(
        `${HEADER}${key},One,,,,rfid:${tag},,\n${key},Two,,,,,,\n${uniq('R')},Three,,,,rfid:${tag},,\n`,
      ),
      Buffer.from([0x41, 0x2c, 0xff, 0x0a]),
      Buffer.from(`${uniq('R')},"open\n${ok},too,few\n`),
    ]);
    const result = await f.importCsv('assets', bytes);
    expect(codesOf(result, 3)).toEqual([['external_key', 'conflict']]);
    expect(codesOf(result, 4)).toEqual([['tags', 'conflict']]);
    expect(codesOf(result, 5)).toEqual([['(row)', 'invalid_encoding']]);
    expect(codesOf(result, 6)).toEqual([['(row)', 'invalid_csv']]);
    expect(result.created).toBe(1);
  });

  it('refuses metadata the API body decoder refuses (lone surrogate, integer past int64) per row, as the API words it', async () => {
    const [lone, big, ok] = [uniq('LONE'), uniq('BIG'), uniq('OK')];
    const csv =
      'external_key,name,metadata\n' +
      `${lone},v,"{""a"":""\\ud800""}"\n${big},v,"{""big"":12345678901234567890}"\n${ok},ok,\n`;
    for (const dryRun of [true, false]) {
      const result = await f.importCsv('assets', csv, { dryRun });
      expect(result).toMatchObject({ created: 1, refused: 2 });
      for (const [row, raw] of [
        [2, '{"name":"v","metadata":{"a":"\\ud800"}}'],
        [3, '{"name":"v","metadata":{"big":12345678901234567890}}'],
      ] as const) {
        const api = await f.t.app.inject({
          method: 'POST',
          url: '/api/v1/assets',
          headers: { ...bearer(f.token), 'content-type': 'application/json' },
          payload: raw,
        });
        expect(api.statusCode).toBe(400);
        const { type, detail } = api.json().error;
        const [error] = result.results.find((r) => r.row === row)!.errors!;
        expect(error).toMatchObject({ type, field: 'metadata' });
        expect(error!.message.replace(/^metadata /, '')).toBe(detail.replace(/^Request body /, ''));
      }
    }
    expect((await f.api('GET', `/api/v1/assets?external_key=${ok}`)).json.data).toHaveLength(1);
    expect((await f.api('GET', `/api/v1/assets?external_key=${big}`)).json.data).toHaveLength(0);
  });

  it('refuses a metadata cell with a number JSON cannot hold exactly, as the API does, instead of storing it rounded', async () => {
    const [big, ok] = [uniq('BIGID'), uniq('OK')];
    const csv = `external_key,name,metadata\n${big},v,"{""erp_id"":1796314808192123456}"\n${ok},ok,"{""erp_id"":1}"\n`;
    const api = await f.t.app.inject({
      method: 'POST',
      url: '/api/v1/assets',
      headers: { ...bearer(f.token), 'content-type': 'application/json' },
      payload: '{"name":"v","metadata":{"erp_id":1796314808192123456}}',
    });
    const [apiField] = api.json().error.fields;
    for (const dryRun of [true, false]) {
      const result = await f.importCsv('assets', csv, { dryRun });
      expect(result).toMatchObject({ created: 1, refused: 1 });
      const [error] = result.results.find((r) => r.row === 2)!.errors!;
      expect(error).toMatchObject({ field: 'metadata', code: 'invalid_value', message: apiField.message });
    }
    expect((await f.api('GET', `/api/v1/assets?external_key=${big}`)).json.data).toHaveLength(0);
  });

  it('names the key of rows refused for their cell count, bytes or quoting when it can be read', async () => {
    const [few, bytes, quote] = [uniq('FEW'), uniq('ENC'), uniq('QUOTE')];
    const result = await f.importCsv(
      'assets',
      Buffer.concat([
        Buffer.from(`name,external_key\nx,${few},extra\n`),
        Buffer.from([0x78, 0xff, 0x2c, ...Buffer.from(`${bytes}\n`)]),
        Buffer.from(`"q"x,${quote}\n`),
      ]),
    );
    expect(result.results.map((r) => [r.external_key, r.errors![0]!.code])).toEqual([
      [few, 'invalid_value'],
      [null, 'invalid_encoding'],
      [null, 'invalid_csv'],
    ]);
    const keyFirst = await f.importCsv(
      'assets',
      Buffer.concat([
        Buffer.from(`external_key,name\n${few},x,extra\n${bytes},`),
        Buffer.from([0xff, 0x0a]),
        Buffer.from(`${quote},"q"x\n`),
      ]),
    );
    expect(keyFirst.results.map((r) => r.external_key)).toEqual([few, bytes, quote]);
  });

  it('refuses a file with CR-only line ends, saying so', async () => {
    await expect(f.importCsv('assets', 'external_key,name\rK1,One\r')).rejects.toMatchObject({
      type: 'bad_request',
      detail: expect.stringMatching(/CR-only line ends/),
    });
  });

  it('refuses a file whose one record never ends before it eats the memory', async () => {
    async function* endless() {
      yield Buffer.from('external_key,name\nK1,"never closed');
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      for (let i = 0; i < 70; i++) yield chunk;
    }
    await expect(
      f.t.services.internal.spreadsheets.import(cliCaller(f.org.id), 'assets', endless()),
    ).rejects.toMatchObject({
      type: 'bad_request',
      detail: expect.stringMatching(/row 2 is larger than 64 MiB/),
    });
  });

  it('refuses a row with a NUL in a cell on that column alone, and writes the rest', async () => {
    const [tagged, keyed, named, ok] = [uniq('NUL'), uniq('NUL'), uniq('NUL'), uniq('OK')];
    const result = await f.importCsv(
      'assets',
      `${HEADER}${tagged},Tagged,,,,barcode:x\u0000y,,\n${keyed}\u0000,Keyed,,,,,,\n${named},Na\u0000me,,,,rfid:${named},,\n${ok},Fine,,,,rfid:${ok},,\n`,
    );
    expect(codesOf(result, 2)).toEqual([['tags', 'invalid_value']]);
    expect(codesOf(result, 3)).toEqual([['external_key', 'invalid_value']]);
    expect(codesOf(result, 4)).toEqual([['name', 'invalid_value']]);
    expect(result.results[0]!.errors![0]!.message).toBe('tags must not contain U+0000');
    expect(result).toMatchObject({ applied: true, created: 1, refused: 3 });
    expect((await f.api('GET', `/api/v1/assets?external_key=${ok}`)).json.data).toHaveLength(1);
  });

  it('assigns the lowest free ASSET-NNNN keys to rows without one, after the keys the file names', async () => {
    const g = await sheetFixture();
    try {
      await g.api('POST', '/api/v1/assets', { name: 'First' }); // ASSET-0001
      const result = await g.importCsv('assets', 'external_key,name\n,A\nASSET-0002,B\n,C\n');
      expect(result.results.map((r) => r.external_key)).toEqual(['ASSET-0003', 'ASSET-0002', 'ASSET-0004']);
      const next = await g.api('POST', '/api/v1/assets', { name: 'Next' });
      expect(next.json.data.external_key).toBe('ASSET-0005');
    } finally {
      await g.t.close();
    }
  });

  it('all-or-nothing writes nothing when a row is refused', async () => {
    const before = await count();
    const result = await f.importCsv('assets', `external_key,name\n${uniq('A')},Fine\n${uniq('A')},\n`, {
      allOrNothing: true,
    });
    expect(result).toMatchObject({ applied: false, created: 1, refused: 1 });
    expect(await count()).toBe(before);
  });

  it('refuses a header with unknown or server-managed columns as a whole', async () => {
    await expect(f.importCsv('assets', 'external_key;name\nA;B\n')).rejects.toMatchObject({
      type: 'validation_error',
      fields: [{ field: 'external_key;name', code: 'unknown_field' }],
    });
    await expect(f.importCsv('assets', 'id,name\n1,B\n')).rejects.toMatchObject({
      fields: [{ field: 'id', code: 'read_only' }],
    });
    await expect(f.importCsv('assets', '')).rejects.toMatchObject({ type: 'bad_request' });
  });

  it('keeps organizations apart: same keys and tags elsewhere are another organization’s rows', async () => {
    const key = uniq('ISO');
    await f.importCsv('assets', `external_key,name,tags\n${key},Mine,rfid:${key}\n`);
    const other = await f.t.createOrg();
    const theirs = await f.importCsv(
      'assets',
      `external_key,name,tags\n${key},Theirs,rfid:${key}\n`,
      {},
      other.id,
    );
    expect(theirs).toMatchObject({ created: 1, refused: 0 });
    const mine = (await f.api('GET', `/api/v1/assets?external_key=${key}`)).json.data;
    expect(mine.map((a: { name: string }) => a.name)).toEqual(['Mine']);
    expect(await f.exportCsv('assets', { external_key: [key] }, other.id)).toContain('Theirs');
    expect(await f.exportCsv('assets', { external_key: [key] })).not.toContain('Theirs');
  });

  it('export then import changes nothing', async () => {
    const csv = await f.exportCsv('assets');
    const result = await f.importCsv('assets', csv);
    expect(result.refused).toBe(0);
    expect(result.created + result.changed).toBe(0);
    expect(result.unchanged).toBeGreaterThan(3);
  });
});
