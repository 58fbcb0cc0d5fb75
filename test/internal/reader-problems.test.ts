import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Browser,
  buildInternalApp,
  expectInternalError,
  type InternalTestApp,
  insertAsset,
  insertLocation,
} from './helpers.js';

describe('GET /internal/readers/{reader_id}/problems', () => {
  let t: InternalTestApp;
  let me: Browser;
  let reader: number;
  let other: number;
  const insertMessage = (
    readerId: number,
    at: string,
    bad: number,
    unknown: number,
    errors: string[] | null,
    payload: string,
  ) =>
    t.database.db.pool.query(
      `INSERT INTO raw_messages (received_at, org_id, reader_id, source, payload, good_reads, bad_reads, unknown_reads, errors)
       VALUES ($1, $2, $3, 'mqtt', $4, 1, $5, $6, $7)`,
      [at, me.orgId, readerId, payload, bad, unknown, errors],
    );

  beforeAll(async () => {
    t = await buildInternalApp();
    me = await t.signUp();
    const create = async (name: string, topic: string) => {
      const res = await me.post('/internal/readers', {
        name,
        family: 'impinj-r700',
        identity: name,
        topic,
        webhook: false,
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data.id as number;
    };
    reader = await create('Dock door', 'site/dock');
    other = await create('Gate', 'site/gate');
  });
  afterAll(() => t.close());

  it("lists the reader's latest messages with bad reads or unknown tags, newest first, with why", async () => {
    await insertMessage(reader, '2026-01-01T10:00:00Z', 0, 1, null, '{"tag":"E200-UNKNOWN-1"}');
    await insertMessage(reader, '2026-01-01T11:00:00Z', 0, 0, null, '{"tag":"E200-GOOD"}');
    await insertMessage(
      reader,
      '2026-01-01T12:00:00Z',
      2,
      0,
      ['read 1: antenna 9 has no scan point', 'read 2: bad epc'],
      'x'.repeat(3000),
    );
    await insertMessage(other, '2026-01-01T13:00:00Z', 1, 1, ['read 1: other reader'], '{}');

    const res = await me.get(`/internal/readers/${reader}/problems`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.last_problem_at).toBe('2026-01-01T12:00:00.000Z');
    expect(body.data).toEqual([
      {
        received_at: '2026-01-01T12:00:00.000Z',
        bad_reads: 2,
        unknown_reads: 0,
        errors: ['read 1: antenna 9 has no scan point', 'read 2: bad epc'],
        payload: 'x'.repeat(2000),
        payload_truncated: true,
      },
      {
        received_at: '2026-01-01T10:00:00.000Z',
        bad_reads: 0,
        unknown_reads: 1,
        errors: [],
        payload: '{"tag":"E200-UNKNOWN-1"}',
        payload_truncated: false,
      },
    ]);
    // Not an Impinj payload: no tag to name, but the errors are listed on their own.
    expect(body.unknown_tags).toEqual([]);
    expect(body.read_errors).toEqual([
      { received_at: '2026-01-01T12:00:00.000Z', message: 'read 1: antenna 9 has no scan point' },
      { received_at: '2026-01-01T12:00:00.000Z', message: 'read 2: bad epc' },
    ]);
  });

  it('names the unknown tags (when last seen, which antenna, how often) and the refused reads, as ingested', async () => {
    const res = await me.post('/internal/readers', {
      name: 'Generic',
      family: 'generic-json',
      identity: 'gen-1',
      topic: 'site/generic',
      webhook: false,
    });
    const id = res.json().data.id as number;
    const ref = { id, orgId: me.orgId, family: 'generic-json' as const };
    const dock = await insertLocation(t, me.orgId, { external_key: 'DOCK', name: 'Dock' });
    await me.post(`/internal/readers/${id}/scan-points`, { antenna: 1, location_id: dock });
    await insertAsset(t, me.orgId, { external_key: 'KNOWN', name: 'Known', tag: 'E2000000000000000000AAAA' });
    const ingest = (payload: unknown, at: string) =>
      t.services.ingest.readerMessage(ref, JSON.stringify(payload), 'mqtt', Date.parse(at));
    await ingest(
      {
        reads: [
          { tag: 'E2000000000000000000AAAA', antenna: 1 },
          { tag: 'e2000000000000000000bbbb', antenna: 1 },
          { tag: 'PALLET-9', tag_type: 'barcode', antenna: 2 },
        ],
      },
      '2026-02-01T08:00:00Z',
    );
    await ingest(
      {
        reads: [
          { tag: 'E2000000000000000000BBBB', antenna: 3, time: '2026-02-01T08:59:30Z' },
          { tag: 'E2000000000000000000AAAA', antenna: 7 },
          { tag: 'not-hex!', antenna: 1 },
        ],
      },
      '2026-02-01T09:00:00Z',
    );
    const body = (await me.get(`/internal/readers/${id}/problems`)).json();
    // The known tag is left out; BBBB twice, last on antenna 3 at the reader's own time.
    expect(body.unknown_tags).toEqual([
      {
        tag_type: 'rfid',
        value: 'E2000000000000000000BBBB',
        antenna: 3,
        seen_at: '2026-02-01T08:59:30.000Z',
        reads: 2,
      },
      { tag_type: 'barcode', value: 'PALLET-9', antenna: 2, seen_at: '2026-02-01T08:00:00.000Z', reads: 1 },
    ]);
    expect(body.read_errors).toEqual([
      { received_at: '2026-02-01T09:00:00.000Z', message: expect.stringContaining('read 3') },
      { received_at: '2026-02-01T09:00:00.000Z', message: 'no scan point for antenna 7' },
    ]);
    // Once the tag is attached to an asset, it is no longer unknown.
    await insertAsset(t, me.orgId, { external_key: 'NEW', name: 'New', tag: 'E2000000000000000000BBBB' });
    const after = (await me.get(`/internal/readers/${id}/problems`)).json();
    expect(after.unknown_tags.map((u: { value: string }) => u.value)).toEqual(['PALLET-9']);
  });

  it('a reader without problems has an empty list; an unknown reader is 404, a bad id 400', async () => {
    const fresh = await me.post('/internal/readers', {
      name: 'Quiet',
      family: 'impinj-r700',
      identity: 'Quiet',
      topic: 'site/quiet',
      webhook: false,
    });
    const id = fresh.json().data.id;
    expect((await me.get(`/internal/readers/${id}/problems`)).json()).toEqual({
      data: [],
      last_problem_at: null,
      unknown_tags: [],
      read_errors: [],
    });
    expectInternalError(await me.get('/internal/readers/999999/problems'), {
      status: 404,
      type: 'not_found',
    });
    expectInternalError(await me.get('/internal/readers/abc/problems'), {
      status: 400,
      type: 'validation_error',
    });
  });
});
