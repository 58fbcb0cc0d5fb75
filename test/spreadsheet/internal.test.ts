/**
 * The web app's import and export endpoints: a streamed CSV upload answered with NDJSON
 * progress and the result, the export as a CSV download with the list's filters, and
 * the session, CSRF, media type and organization rules.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_UPLOAD_BYTES } from '../../src/spreadsheet/internal-routes/import-export.js';
import {
  type Browser,
  buildInternalApp,
  expectInternalError,
  type InternalTestApp,
} from '../internal/helpers.js';

const upload = (b: Browser, url: string, csv: string, csrf?: string | null) =>
  b.request({ method: 'POST', url, headers: { 'content-type': 'text/csv' }, payload: csv, csrf });

const ndjson = (body: string) =>
  body
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('/internal/import and /internal/export', () => {
  let t: InternalTestApp;
  let me: Browser;
  beforeAll(async () => {
    t = await buildInternalApp();
    me = await t.signUp();
  });
  afterAll(() => t.close());

  it('a dry run answers progress lines and the per-row result, and writes nothing; then the import writes', async () => {
    const csv = 'external_key,name,parent_external_key\nROOM,Room,SITE\nSITE,Site,\nBAD,,\n';
    const dry = await upload(me, '/internal/import/locations?dry_run=true', csv);
    expect(dry.statusCode, dry.body).toBe(200);
    expect(dry.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = ndjson(dry.body);
    expect(lines[0]).toEqual({ progress: { phase: 'checking', done: 0, total: 3 } });
    const { result } = lines.at(-1);
    expect(result).toMatchObject({
      dry_run: true,
      applied: false,
      created: 2,
      refused: 1,
      results_truncated: false,
    });
    expect(result.results.map((r: { outcome: string }) => r.outcome)).toEqual([
      'create',
      'create',
      'refused',
    ]);
    expect(result.results[2].errors).toEqual([
      { type: 'validation_error', field: 'name', code: 'required', message: 'name is required' },
    ]);
    expect((await me.get('/internal/locations/tree')).statusCode).toBeLessThan(500);
    const none = await t.database.db.withOrg(me.orgId, (tx) => tx.query('SELECT 1 FROM locations'));
    expect(none.rowCount).toBe(0);

    const real = ndjson((await upload(me, '/internal/import/locations', csv)).body);
    expect(real.some((l) => l.progress?.phase === 'writing')).toBe(true);
    expect(real.at(-1).result).toMatchObject({ applied: true, created: 2, refused: 1 });
  });

  it('a NUL in a cell refuses its row with the reason, and the other rows are imported', async () => {
    const csv = 'external_key,name,tags\nNUL-1,Tagged,barcode:x\u0000y\nNUL-2,Fine,barcode:NUL-2\n';
    // An organization of its own: the other tests count this one's assets.
    const res = await upload(await t.signUp(), '/internal/import/assets', csv);
    expect(res.statusCode, res.body).toBe(200);
    const { result } = ndjson(res.body).at(-1);
    expect(result).toMatchObject({ applied: true, created: 1, refused: 1 });
    expect(result.results[0].errors).toEqual([
      {
        type: 'validation_error',
        field: 'tags',
        code: 'invalid_value',
        message: 'tags must not contain U+0000',
      },
    ]);
  });

  it('a file that cannot be imported is an ordinary error answer', async () => {
    const res = await upload(me, '/internal/import/assets', 'key,name\nA,B\n');
    expectInternalError(res, { status: 400, type: 'validation_error' });
    expect(res.json().error.fields[0]).toMatchObject({ field: 'key', code: 'unknown_field' });
    const empty = await upload(me, '/internal/import/assets', '');
    expectInternalError(empty, { status: 400, type: 'bad_request' });
  });

  it('takes only text/csv, and needs the session and the CSRF token', async () => {
    const json = await me.post('/internal/import/assets', { csv: 'external_key,name\nA,B\n' });
    expectInternalError(json, { status: 415, type: 'unsupported_media_type' });
    const noCsrf = await upload(me, '/internal/import/assets', 'external_key,name\nA,B\n', null);
    expectInternalError(noCsrf, { status: 403, type: 'forbidden' });
    const anonymous = await t.app.inject({
      method: 'POST',
      url: '/internal/import/assets',
      headers: { 'content-type': 'text/csv' },
      payload: 'external_key,name\nA,B\n',
    });
    expectInternalError(anonymous, { status: 401, type: 'unauthorized' });
    const nothing = await t.database.db.withOrg(me.orgId, (tx) => tx.query('SELECT 1 FROM assets'));
    expect(nothing.rowCount).toBe(0);
  });

  it('refuses an upload larger than the limit with 413, also when it announces no length', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    async function* tooBig() {
      yield Buffer.from('external_key,name\n');
      for (let sent = 0; sent <= MAX_UPLOAD_BYTES; sent += chunk.length) yield chunk;
    }
    const res = await me.request({
      method: 'POST',
      url: '/internal/import/assets',
      headers: { 'content-type': 'text/csv' },
      payload: Readable.from(tooBig()),
    });
    expectInternalError(res, { status: 413, type: 'payload_too_large' });
    const nothing = await t.database.db.withOrg(me.orgId, (tx) => tx.query('SELECT 1 FROM assets'));
    expect(nothing.rowCount).toBe(0);
  });

  it('exports CSV with the list filters, only of the signed-in organization', async () => {
    await upload(
      me,
      '/internal/import/assets',
      'external_key,name,is_active\nP-1,Pump,true\nV-1,Valve,false\n',
    );
    const other = await t.signUp();
    await upload(other, '/internal/import/assets', 'external_key,name\nX-1,Theirs\n');
    const all = await me.get('/internal/export/assets');
    expect(all.statusCode).toBe(200);
    expect(all.headers['content-type']).toMatch(/^text\/csv/);
    expect(all.headers['content-disposition']).toMatch(
      /^attachment; filename="assets-\d{4}-\d{2}-\d{2}\.csv"$/,
    );
    const lines = all.body.trim().split('\r\n');
    expect(lines[0]).toBe('external_key,name,description,is_active,metadata,tags,valid_from,valid_to');
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(['P-1', 'V-1']);
    const active = await me.get('/internal/export/assets?is_active=true&q=pum');
    expect(
      active.body
        .trim()
        .split('\r\n')
        .slice(1)
        .map((l) => l.split(',')[0]),
    ).toEqual(['P-1']);
    const bad = await me.get('/internal/export/assets?location_id=1&location_external_key=X');
    expectInternalError(bad, { status: 400, type: 'validation_error' });
    const unknown = await me.get('/internal/export/assets?limit=5');
    expect(unknown.json().error.fields[0]).toMatchObject({ field: 'limit', code: 'unknown_field' });
    const locations = await me.get('/internal/export/locations?parent_external_key=SITE');
    expect(
      locations.body
        .trim()
        .split('\r\n')
        .slice(1)
        .map((l) => l.split(',')[0]),
    ).toEqual(['ROOM']);
  });
});
