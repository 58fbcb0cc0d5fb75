import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sendWebhook } from './sender.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A receiver that answers every request with `answer`, on a free loopback port. */
async function receiver(answer: (res: ServerResponse) => void): Promise<string> {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

const send = (url: string, timeoutMs = 1500) => sendWebhook(url, '{}', {}, { timeoutMs, allowPrivate: true });

describe('sendWebhook settles every exchange', () => {
  it('a 2xx with an answer longer than it reads is delivered, at once', async () => {
    const url = await receiver((res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('x'.repeat(200 * 1024));
    });
    expect(await send(url)).toMatchObject({ ok: true, status: 200, error: null });
  });

  it('a 5xx with a long answer is a failure, not a hang', async () => {
    const url = await receiver((res) => {
      res.writeHead(503);
      res.end('y'.repeat(200 * 1024));
    });
    expect(await send(url)).toMatchObject({ ok: false, status: 503, error: 'HTTP 503' });
  });

  it('a status line in time whose body never ends is judged by its status when the time is up', async () => {
    const url = await receiver((res) => {
      res.writeHead(202);
      res.write('started, never finished');
    });
    const result = await send(url, 500);
    expect(result).toMatchObject({ ok: true, status: 202 });
    expect(result.durationMs).toBeGreaterThanOrEqual(400);
  });

  it('no answer at all within the time is a failure naming the bound', async () => {
    const url = await receiver(() => undefined);
    const result = await send(url, 300);
    expect(result).toMatchObject({ ok: false, status: null });
    expect(result.error).toMatch(/no answer within 300 ms/);
  });

  it('a connection closed mid-answer after a 2xx status is judged by that status', async () => {
    const url = await receiver((res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('part');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    expect(await send(url)).toMatchObject({ ok: true, status: 200 });
  });
});
