/**
 * Location import: parents by parent_external_key in any row order, refused parents
 * taking their children with them, moves that would close a cycle, and the round trip.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codesOf, type SheetFixture, sheetFixture, uniq } from './helpers.js';

describe('location import', () => {
  let f: SheetFixture;
  beforeAll(async () => {
    f = await sheetFixture();
  });
  afterAll(() => f.t.close());

  const byKey = async (key: string) =>
    (await f.api('GET', `/api/v1/locations?external_key=${key}`)).json.data[0];

  it('creates a tree whose children come before their parents in the file', async () => {
    const [site, hall, room] = [uniq('SITE'), uniq('HALL'), uniq('ROOM')];
    const result = await f.importCsv(
      'locations',
      `external_key,name,parent_external_key,tags\n${room},Room,${hall},barcode:${room}\n${hall},Hall,${site},\n${site},Site,,\n`,
    );
    expect(result).toMatchObject({ created: 3, refused: 0 });
    expect((await byKey(room)).parent_external_key).toBe(hall);
    expect((await byKey(hall)).parent_external_key).toBe(site);
    expect((await byKey(site)).parent_id).toBeNull();
    const ancestors = await f.api('GET', `/api/v1/locations/${(await byKey(room)).id}/ancestors`);
    expect(ancestors.json.data.map((l: { external_key: string }) => l.external_key)).toEqual([site, hall]);
  });

  it('refuses a missing parent with fk_not_found, as the API does, and the refused row’s children too', async () => {
    const [a, b, c] = [uniq('A'), uniq('B'), uniq('C')];
    const missing = uniq('NOPE');
    const result = await f.importCsv(
      'locations',
      `external_key,name,parent_external_key\n${a},A,${missing}\n${b},B,${a}\n${c},,\n`,
    );
    expect(codesOf(result, 2)).toEqual([['parent_external_key', 'fk_not_found']]);
    expect(codesOf(result, 3)).toEqual([['parent_external_key', 'fk_not_found']]);
    expect(codesOf(result, 4)).toEqual([['name', 'required']]);
    const api = await f.api('POST', '/api/v1/locations', { name: 'A', parent_external_key: missing });
    expect(api.json.error.fields.map((e: { field: string; code: string }) => [e.field, e.code])).toEqual([
      ['parent_external_key', 'fk_not_found'],
    ]);
  });

  it('a refused row for a parent that exists leaves its children to be decided on their own', async () => {
    const [root, kid] = [uniq('ROOT'), uniq('KID')];
    expect((await f.importCsv('locations', `external_key,name\n${root},Root\n`)).created).toBe(1);
    const result = await f.importCsv(
      'locations',
      `external_key,name,parent_external_key\n${root}," bad",\n${kid},k,${root}\n`,
    );
    expect(codesOf(result, 2)).toEqual([['name', 'invalid_value']]);
    expect(result.results[1]).toMatchObject({ external_key: kid, outcome: 'create' });
    expect((await byKey(kid)).parent_external_key).toBe(root);
  });

  it('refuses moves that would make a location its own ancestor with conflict, naming the cycle', async () => {
    const [top, mid, leaf] = [uniq('TOP'), uniq('MID'), uniq('LEAF')];
    await f.importCsv(
      'locations',
      `external_key,name,parent_external_key\n${top},T,\n${mid},M,${top}\n${leaf},L,${mid}\n`,
    );
    const result = await f.importCsv(
      'locations',
      `external_key,name,parent_external_key\n${top},T,${leaf}\n${uniq('SELF')},S,\n`,
    );
    expect(codesOf(result, 2)).toEqual([['parent_external_key', 'conflict']]);
    expect(result.results[0]!.errors![0]!.message).toContain(`${leaf} → ${mid} → ${top}`);
    const api = await f.api('PATCH', `/api/v1/locations/${(await byKey(top)).id}`, {
      parent_external_key: leaf,
    });
    expect(api.status).toBe(409);

    const self = uniq('SELF');
    const selfRow = await f.importCsv(
      'locations',
      `external_key,name,parent_external_key\n${self},S,${self}\n`,
    );
    expect(codesOf(selfRow, 2)).toEqual([['parent_external_key', 'conflict']]);

    const [x, y] = [uniq('X'), uniq('Y')];
    const loop = await f.importCsv(
      'locations',
      `external_key,name,parent_external_key\n${x},X,${y}\n${y},Y,${x}\n`,
    );
    expect(loop.refused).toBe(2);
    expect(await byKey(x)).toBeUndefined();
  });

  it('moves, renames and detaches to the root; an empty parent cell is the root', async () => {
    const [p, q, child] = [uniq('P'), uniq('Q'), uniq('CH')];
    await f.importCsv(
      'locations',
      `external_key,name,parent_external_key\n${p},P,\n${q},Q,\n${child},Child,${p}\n`,
    );
    const moved = await f.importCsv(
      'locations',
      `external_key,name,parent_external_key\n${child},Child 2,${q}\n`,
    );
    expect(moved.results[0]).toMatchObject({ outcome: 'update', changed: ['name', 'parent_external_key'] });
    expect((await byKey(child)).parent_external_key).toBe(q);
    await f.importCsv('locations', `external_key,parent_external_key\n${child},\n`);
    expect((await byKey(child)).parent_id).toBeNull();
  });

  it('keeps organizations apart: a parent key of another organization does not resolve', async () => {
    const key = uniq('THEIRS');
    const other = await f.t.createOrg();
    await f.importCsv('locations', `external_key,name\n${key},Theirs\n`, {}, other.id);
    const result = await f.importCsv(
      'locations',
      `external_key,name,parent_external_key\n${uniq('M')},Mine,${key}\n`,
    );
    expect(codesOf(result, 2)).toEqual([['parent_external_key', 'fk_not_found']]);
  });

  it('refuses metadata, which locations do not have, as the API does', async () => {
    await expect(f.importCsv('locations', 'external_key,name,metadata\nA,B,{}\n')).rejects.toMatchObject({
      fields: [{ field: 'metadata', code: 'unknown_field' }],
    });
  });

  it('export then import changes nothing', async () => {
    const csv = await f.exportCsv('locations');
    const result = await f.importCsv('locations', csv);
    expect(result).toMatchObject({ created: 0, changed: 0, refused: 0 });
    expect(result.unchanged).toBeGreaterThan(5);
  });

  it('refuses a row with a NUL in its parent or tags cell alone, and writes the rest', async () => {
    const [a, b, ok] = [uniq('NUL'), uniq('NUL'), uniq('OK')];
    const result = await f.importCsv(
      'locations',
      `external_key,name,parent_external_key,tags\n${a},A,x\u0000y,\n${b},B,,rfid:x\u0000y\n${ok},Fine,,rfid:${ok}\n`,
    );
    expect(codesOf(result, 2)).toEqual([['parent_external_key', 'invalid_value']]);
    expect(codesOf(result, 3)).toEqual([['tags', 'invalid_value']]);
    expect(result).toMatchObject({ applied: true, created: 1, refused: 2 });
  });
});
