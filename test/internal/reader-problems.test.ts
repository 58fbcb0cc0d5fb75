import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, buildInternalApp, expectInternalError, type InternalTestApp } from './helpers.js';

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
