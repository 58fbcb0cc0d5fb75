/**
 * A client that closes its side before its body has arrived whole: the request failed,
 * not the database. Reading the body fails with Node's "aborted" (ECONNRESET), which is
 * also a code of a lost database connection; it was logged as "database unavailable;
 * answered 503", which an operator's outage alerts would count.
 */
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { listenOnLoopback } from '../helpers/listening.js';

let t: TestApp;
let port: number;
let token: string;
const lines: { level: number; msg: string }[] = [];

beforeAll(async () => {
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  t = await buildTestApp({ logger: { level: 'info', stream } });
  port = await listenOnLoopback(t.app);
  token = (await (await t.createOrg()).key()).token;
});
afterAll(() => t.close());

it('a body cut short by the client is logged as the client going away, not as an outage', async () => {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(
    'POST /api/v1/locations HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n' +
      `authorization: Bearer ${token}\r\ncontent-length: 100\r\n\r\n{"name":"x"}`,
  );
  // The headers are taken (the request reaches its route and reads its body) before the client gives up.
  await new Promise((r) => setTimeout(r, 300));
  socket.end();
  await vi.waitFor(
    () =>
      expect(lines.some((l) => l.msg === 'client closed the connection before its body arrived')).toBe(true),
    { timeout: 5_000 },
  );
  expect(lines.filter((l) => /database unavailable|unhandled error/.test(l.msg))).toEqual([]);
  socket.destroy();
});
