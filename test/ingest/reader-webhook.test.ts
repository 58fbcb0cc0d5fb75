import { readFileSync } from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { listenOnLoopback } from '../helpers/listening.js';
import { rawRequest, requestBytes } from '../helpers/raw-http.js';
import { genericJson, ingestFixture } from './helpers.js';

/** The error envelope of the service (outside /api/; the reader's X-RateLimit-* headers come only once its secret is checked). */
function expectErrorEnvelope(res: LightMyRequestResponse, status: number, type: string): void {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json();
  expect(body.error).toMatchObject({ type, status, instance: res.raw.req.url?.split('?')[0] });
  expect(body.error.request_id).toBe(res.headers['x-request-id']);
}

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ bodyLimit: 64 * 1024 });
});
afterAll(() => t?.close());

describe('POST /ingest/v1/readers/:reader_id/messages', () => {
  const webhookArray = readFileSync(
    new URL('../fixtures/readers/impinj-r700/webhook-array.json', import.meta.url),
  );
  const post = (
    readerId: number | string,
    secret: string | null,
    body: string | Buffer,
    type = 'application/json',
  ) =>
    t.app.inject({
      method: 'POST',
      url: `/ingest/v1/readers/${readerId}/messages`,
      headers: {
        ...(secret === null ? {} : { authorization: `Bearer ${secret}` }),
        ...(type ? { 'content-type': type } : {}),
      },
      payload: body,
    });

  it('stores an Impinj webhook batch and answers 204 once it is committed', async () => {
    const f = await ingestFixture(t);
    const [left, right] = [await f.location(), await f.location()];
    const first = await f.asset('E2801160600002054E3C5F4A');
    const second = await f.asset('300833B2DDD9014000000000');
    const { reader, secret } = await f.reader(
      'impinj-r700',
      [
        [1, left],
        [2, right],
      ],
      { webhook: true },
    );
    const res = await post(reader.id, secret!, webhookArray);
    expect(res.statusCode, res.body).toBe(204);
    expect(res.body).toBe('');
    // The third read is on antenna 4, which has no scan point; its tag is no asset's either.
    expect(res.headers).toMatchObject({
      'x-tagtrail-good-reads': '2',
      'x-tagtrail-bad-reads': '0',
      'x-tagtrail-unknown-reads': '1',
    });
    expect(await f.currentLocation(first)).toBe(left);
    expect(await f.currentLocation(second)).toBe(right);
    expect(await f.rawMessages(reader.id)).toMatchObject([
      { source: 'webhook', payload: webhookArray.toString() },
    ]);
    expect(await f.history(first)).toHaveLength(1);
  });

  it('takes any content type, and logs a malformed body with 204', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const asset = await f.asset('E2801160600002054E3C5F4A');
    const { reader, secret } = await f.reader('impinj-r700', [[null, dock]], { webhook: true });
    expect((await post(reader.id, secret!, webhookArray, 'text/plain')).statusCode).toBe(204);
    expect((await post(reader.id, secret!, webhookArray, 'application/octet-stream')).statusCode).toBe(204);
    expect((await post(reader.id, secret!, webhookArray, '')).statusCode).toBe(204);
    const bad = await post(reader.id, secret!, '[{"timestamp": "2024-06-01T12:00:00Z", "eventType"');
    expect(bad.statusCode).toBe(204);
    expect(bad.headers['x-tagtrail-bad-reads']).toBe('1');
    const empty = await post(reader.id, secret!, '');
    expect(empty.statusCode).toBe(204);
    expect(await f.currentLocation(asset)).toBe(dock);
    const counters = await f.readerCounters(reader.id);
    expect(counters.bad).toBe(2);
    expect(await f.rawMessages(reader.id)).toHaveLength(5);
  });

  it('counts all 150 malformed items of a post as bad, not the 100 errors kept', async () => {
    const f = await ingestFixture(t);
    const { reader, secret } = await f.reader('generic-json', [], { webhook: true });
    const res = await post(reader.id, secret!, `[${Array(150).fill('{"tag":"zz"}').join(',')}]`);
    expect(res.headers['x-tagtrail-bad-reads']).toBe('150');
    expect((await f.readerCounters(reader.id)).bad).toBe(150);
  });

  it('answers a retried post of a message with reader times 204 once more, without storing it again', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const asset = await f.asset('E2801160600002054E3C5F4B');
    const { reader, secret } = await f.reader('generic-json', [[null, dock]], { webhook: true });
    const body = genericJson([['E2801160600002054E3C5F4B', 1, new Date(Date.now() - 1_000).toISOString()]]);
    const first = await post(reader.id, secret!, body);
    expect(first.statusCode).toBe(204);
    expect(first.headers['x-tagtrail-duplicate']).toBeUndefined();
    const retried = await post(reader.id, secret!, body);
    expect(retried.statusCode).toBe(204);
    expect(retried.headers).toMatchObject({
      'x-tagtrail-duplicate': 'true',
      'x-tagtrail-good-reads': '0',
      'x-tagtrail-bad-reads': '0',
      'x-tagtrail-unknown-reads': '0',
    });
    expect(await f.readerCounters(reader.id)).toEqual({ good: 1, bad: 0, unknown: 0 });
    expect(await f.rawMessages(reader.id)).toHaveLength(1);
    expect(await f.currentLocation(asset)).toBe(dock);
  });

  it('answers 401 for a missing or wrong secret and for a reader without one', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const { reader, secret } = await f.reader('impinj-r700', [[null, dock]], { webhook: true });
    const plain = await f.reader('impinj-r700', [[null, dock]]);
    for (const res of [
      await post(reader.id, null, webhookArray),
      await post(reader.id, `${secret}x`, webhookArray),
      await post(reader.id, 'x', webhookArray),
      await post(plain.reader.id, secret!, webhookArray),
      await t.app.inject({
        method: 'POST',
        url: `/ingest/v1/readers/${reader.id}/messages`,
        headers: { authorization: `Basic ${secret}`, 'content-type': 'application/json' },
        payload: webhookArray,
      }),
    ]) {
      expectErrorEnvelope(res, 401, 'unauthorized');
    }
    expect(await f.rawMessages(reader.id)).toEqual([]);
  });

  it('answers another method 405 with Allow: POST, as every path of the service does', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'OPTIONS'] as const) {
      const res = await t.app.inject({
        method,
        url: '/ingest/v1/readers/1/messages',
        headers: { 'content-type': 'application/json' },
        payload: method === 'PUT' ? '{}' : undefined,
      });
      expectErrorEnvelope(res, 405, '405');
      expect(res.headers.allow, method).toBe('POST');
    }
  });

  it('answers 404 for an unknown, deleted or malformed reader id', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const { reader, secret } = await f.reader('impinj-r700', [[null, dock]], { webhook: true });
    await t.services.readers.delete(cliCaller(f.orgId), reader.id);
    for (const id of [reader.id, 2147483647, 2147483648, '0', 'abc', '01']) {
      expectErrorEnvelope(await post(id, secret!, webhookArray), 404, 'not_found');
    }
  });

  it("refuses a body over the limit with 413, stores nothing of it and records it in the reader's health", async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const { reader, secret } = await f.reader('generic-json', [[null, dock]], { webhook: true });
    expectErrorEnvelope(await post(reader.id, secret!, 'x'.repeat(70 * 1024)), 413, 'payload_too_large');
    expect(await f.rawMessages(reader.id)).toEqual([
      {
        source: 'webhook',
        payload: '',
        good_reads: 0,
        bad_reads: 1,
        unknown_reads: 0,
        errors: [`webhook body refused with 413: over the limit of ${64 * 1024} bytes (TAGTRAIL_BODY_LIMIT)`],
      },
    ]);
    const health = await t.services.readers.get(f.orgId, reader.id);
    expect(health.lastErrorAt).not.toBeNull();
    expect(health.badReads).toBe(1);
    // Without the reader's secret nothing is recorded: anyone could fill its health otherwise.
    expectErrorEnvelope(await post(reader.id, 'wrong', 'x'.repeat(70 * 1024)), 401, 'unauthorized');
    expect(await f.rawMessages(reader.id)).toHaveLength(1);
  });

  describe('over HTTP, the secret is checked before the body is read', () => {
    let port: number;
    beforeAll(async () => {
      port = await listenOnLoopback(t.app);
    });

    /**
     * Headers announcing `length` body bytes and only the first 100 of them, the connection left
     * open: a server that waits for the body before answering never answers (rawRequest fails).
     */
    const partialPost = (readerId: number, secret: string, length: number) =>
      rawRequest(
        port,
        requestBytes(
          `POST /ingest/v1/readers/${readerId}/messages HTTP/1.1`,
          {
            authorization: `Bearer ${secret}`,
            'content-type': 'application/json',
            'content-length': String(length),
          },
          '['.padEnd(100, ' '),
        ),
        { timeoutMs: 5_000 },
      );

    it('answers a wrong secret and an unknown reader without waiting for the body', async () => {
      const f = await ingestFixture(t);
      const { reader, secret } = await f.reader('generic-json', [[null, await f.location()]], {
        webhook: true,
      });
      const wrong = await partialPost(reader.id, `${secret}x`, 60 * 1024);
      expect(wrong.status, wrong.body).toBe(401);
      expect(wrong.json).toMatchObject({ error: { type: 'unauthorized', detail: 'Invalid webhook secret' } });
      const unknown = await partialPost(2147483647, secret!, 60 * 1024);
      expect(unknown.status, unknown.body).toBe(404);
      expect(unknown.json).toMatchObject({ error: { type: 'not_found' } });
      // A body announced over the limit is refused for the secret first: the 413 is for readers only.
      const huge = await partialPost(reader.id, 'wrong', 100 * 1024 * 1024);
      expect(huge.status, huge.body).toBe(401);
      expect(await f.rawMessages(reader.id)).toEqual([]);
    });

    it('reads the whole body of a reader with its secret and answers 204', async () => {
      const f = await ingestFixture(t);
      const dock = await f.location();
      const asset = await f.asset('E2801160600002054E3C5F4A');
      const { reader, secret } = await f.reader('impinj-r700', [[null, dock]], { webhook: true });
      const res = await rawRequest(
        port,
        requestBytes(
          `POST /ingest/v1/readers/${reader.id}/messages HTTP/1.1`,
          {
            authorization: `Bearer ${secret}`,
            'content-type': 'application/json',
            'content-length': String(webhookArray.length),
          },
          webhookArray.toString('utf8'),
        ),
      );
      expect(res.status, res.body).toBe(204);
      expect(await f.currentLocation(asset)).toBe(dock);
      expect(await f.rawMessages(reader.id)).toHaveLength(1);
    });
  });
});
