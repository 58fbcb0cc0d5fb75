/**
 * GET /internal/live as an operator sees it: a stream is a request that never answered in
 * Fastify's sense (the reply is hijacked), so without its own accounting it was missing
 * from the request metrics and the log when the client went away, and counted with its
 * whole life as its latency when the server ended it. Here each stream, once ended, is one
 * request in `tagtrail_http_request_duration_seconds` (with the time until its headers),
 * one observation of `tagtrail_http_stream_duration_seconds` by why it ended, and one
 * request log line with its life and the reason; `tagtrail_http_open_streams` counts those
 * open.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { STREAMS_PER_SESSION } from '../../src/events/internal-routes/live.js';
import { listenOnLoopback } from '../helpers/listening.js';
import { Scrape } from '../helpers/prometheus.js';
import { buildInternalApp, type InternalTestApp } from '../internal/helpers.js';
import { openStream, type Stream } from './live-stream.js';

interface LogLine {
  level: number;
  msg: string;
  request_id?: string;
  method?: string;
  path?: string;
  status?: number;
  ms?: number;
  org_id?: number;
  reason?: string;
}

let t: InternalTestApp;
let base: string;
const lines: LogLine[] = [];

beforeAll(async () => {
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  t = await buildInternalApp({ logger: { level: 'info', stream } });
  base = `http://127.0.0.1:${await listenOnLoopback(t.app)}`;
});
afterAll(() => t?.close());

const scrape = async () => Scrape.parse((await t.services.metrics.http.render()).body);
const LIVE = { method: 'GET', route: '/internal/live', status: '200' };
const requests = (s: Scrape) => s.histogram('tagtrail_http_request_duration_seconds', LIVE);
const ended = (s: Scrape, reason: string) =>
  s.histogram('tagtrail_http_stream_duration_seconds', { route: '/internal/live', reason });
const open = (s: Scrape) => s.value('tagtrail_http_open_streams');
/** The request log lines of one request id. */
const logOf = (requestId: string | undefined) =>
  lines.filter((l) => l.msg === 'request' && l.request_id === requestId);

describe('live streams in the metrics and the log', () => {
  it('a stream the client closes: one request counted, the gauge back down, one log line with why', async () => {
    const me = await t.signUp();
    const before = await scrape();
    expect(before.type('tagtrail_http_open_streams')).toBe('gauge');
    expect(before.type('tagtrail_http_stream_duration_seconds')).toBe('histogram');
    const s = await openStream(base, me.cookie);
    expect(s.status).toBe(200);
    expect(s.requestId).toEqual(expect.any(String));
    expect(open(await scrape())).toBe(open(before) + 1);
    // Nothing is counted or logged while it lasts: a request is, once answered.
    expect(requests(await scrape()).count).toBe(requests(before).count);
    expect(logOf(s.requestId)).toEqual([]);
    await new Promise((r) => setTimeout(r, 1_200));
    s.close();

    await vi.waitFor(() => expect(logOf(s.requestId)).toHaveLength(1), { timeout: 5_000 });
    const after = await scrape();
    expect(open(after)).toBe(open(before));
    expect(requests(after).count - requests(before).count).toBe(1);
    expect(ended(after, 'client_closed').count - ended(before, 'client_closed').count).toBe(1);
    // Its life is in the stream series and the log; the request's time is until its headers.
    const life = ended(after, 'client_closed').sum - ended(before, 'client_closed').sum;
    expect(life).toBeGreaterThanOrEqual(1.2);
    expect(requests(after).sum - requests(before).sum).toBeLessThan(1);
    expect(logOf(s.requestId)[0]).toMatchObject({
      level: 30,
      method: 'GET',
      path: '/internal/live',
      status: 200,
      org_id: me.orgId,
      reason: 'client_closed',
    });
    expect(logOf(s.requestId)[0]!.ms).toBeGreaterThanOrEqual(1_200);
  });

  it(`the ${STREAMS_PER_SESSION + 1}th stream of a session ends its oldest, logged as replaced`, async () => {
    const me = await t.signUp();
    const before = await scrape();
    const streams: Stream[] = [];
    try {
      for (let i = 0; i <= STREAMS_PER_SESSION; i++) streams.push(await openStream(base, me.cookie));
      await streams[0]!.ended;
      expect(logOf(streams[0]!.requestId)).toMatchObject([
        { level: 30, path: '/internal/live', status: 200, org_id: me.orgId, reason: 'replaced' },
      ]);
      const during = await scrape();
      expect(open(during)).toBe(open(before) + STREAMS_PER_SESSION);
      expect(ended(during, 'replaced').count - ended(before, 'replaced').count).toBe(1);
      expect(requests(during).count - requests(before).count).toBe(1);
      for (const s of streams.slice(1)) expect(logOf(s.requestId)).toEqual([]);
    } finally {
      for (const s of streams) s.close();
    }
    await vi.waitFor(async () => expect(open(await scrape())).toBe(open(before)), { timeout: 5_000 });
    const after = await scrape();
    expect(requests(after).count - requests(before).count).toBe(STREAMS_PER_SESSION + 1);
    for (const s of streams.slice(1)) expect(logOf(s.requestId)).toMatchObject([{ reason: 'client_closed' }]);
  });

  it('a stream ended by a sign-out is logged as its session ending', async () => {
    const me = await t.signUp();
    const s = await openStream(base, me.cookie);
    try {
      expect((await me.post('/internal/auth/sign-out')).statusCode).toBe(204);
      await s.ended;
      expect(logOf(s.requestId)).toMatchObject([{ status: 200, reason: 'session_ended' }]);
    } finally {
      s.close();
    }
  });

  it('HEAD answers at once: one plain request and its line, no stream', async () => {
    const me = await t.signUp();
    const before = await scrape();
    const head = await t.app.inject({
      method: 'HEAD',
      url: '/internal/live',
      headers: { accept: 'text/event-stream', cookie: me.cookie },
    });
    expect(head.statusCode).toBe(200);
    const id = head.headers['x-request-id'] as string;
    await vi.waitFor(() => expect(logOf(id)).toHaveLength(1));
    expect(logOf(id)[0]!.reason).toBeUndefined();
    const after = await scrape();
    const heads = { ...LIVE, method: 'HEAD' };
    expect(
      after.histogram('tagtrail_http_request_duration_seconds', heads).count -
        before.histogram('tagtrail_http_request_duration_seconds', heads).count,
    ).toBe(1);
    expect(open(after)).toBe(open(before));
  });

  // Last: it closes the server.
  it('closing the server ends every stream, logged as shutdown, and the gauge returns to 0', async () => {
    const me = await t.signUp();
    const other = await t.signUp();
    const streams = [await openStream(base, me.cookie), await openStream(base, other.cookie)];
    expect(open(await scrape())).toBe(2);
    await t.app.close();
    await Promise.all(streams.map((s) => s.ended));
    expect(open(await scrape())).toBe(0);
    for (const s of streams) expect(logOf(s.requestId)).toMatchObject([{ status: 200, reason: 'shutdown' }]);
  });
});
