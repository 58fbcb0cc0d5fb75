/**
 * The server's close at the stop (src/http/stop-connections.ts), over real sockets: it
 * never waits on a connection that has not sent a request, or on one kept alive after the
 * response to a request that was in flight; requests in flight are answered first, and
 * given the grace at most. Before, each of these held `app.close()` (and so the whole stop)
 * for as long as the client kept its connection: a silent one for ever.
 */
import type { Socket } from 'node:net';
import type { FastifyPluginAsync } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildServer } from '../../src/app.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { listenOnLoopback } from '../helpers/listening.js';
import { openSocket, parseResponses, requestBytes } from '../helpers/raw-http.js';
import { startTestService } from '../helpers/service.js';
import { closesWithin } from '../helpers/socket-close.js';

let t: TestApp;
let token: string;

beforeAll(async () => {
  t = await buildTestApp();
  token = (await (await t.createOrg('Closing Time Freight')).key(['assets:read'])).token;
});
afterAll(() => t?.close());

/**
 * A route that answers once the test lets it. `inside` resolves when a request is in the
 * handler; `release` lets it answer.
 */
function slowRoute() {
  let release: () => void = () => undefined;
  let arrived: () => void = () => undefined;
  const inside = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const plugin: FastifyPluginAsync = async (app) => {
    app.get('/test/slow', async () => {
      arrived();
      await released;
      return { done: true };
    });
  };
  return { plugin, inside, release };
}

async function serve(
  routes: FastifyPluginAsync[] = [],
  stopGraceMs?: number,
): Promise<{ app: App; port: number }> {
  const app = await buildServer(t.services, {
    bodyLimit: 1048576,
    routes,
    ...(stopGraceMs === undefined ? {} : { connection: { stopGraceMs } }),
  });
  return { app, port: await listenOnLoopback(app) };
}

/** Everything the socket receives until it closes. */
function received(socket: Socket): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('close', () => resolve(Buffer.concat(chunks)));
  });
}

/** Whether `work` settles within `ms`: a test then fails on that, not on its hook's timeout. */
async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([
    work.then(() => true),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return settled;
}

/**
 * Resolves with how `app.close()` ended: 'closed', or 'still closing' after `ms` (the
 * sockets are then cut to free it).
 */
async function closeWithin(app: App, ms: number, sockets: Socket[]): Promise<'closed' | 'still closing'> {
  if (await settlesWithin(app.close(), ms)) return 'closed';
  for (const socket of sockets) socket.destroy();
  await app.close();
  return 'still closing';
}

const api = () => requestBytes('GET /api/v1/orgs/me HTTP/1.1', { authorization: `Bearer ${token}` });

describe('closing the HTTP server at the stop', () => {
  it('closes a connection that never sent a request', async () => {
    const { app, port } = await serve();
    const silent = await openSocket(port);
    // Half a request line: a client that trickles its request counts the same.
    const trickling = await openSocket(port);
    trickling.write('GET /api/v1/or');
    const ended = [closesWithin(silent, 10_000), closesWithin(trickling, 10_000)];
    expect(await closeWithin(app, 10_000, [silent, trickling])).toBe('closed');
    expect(await Promise.all(ended)).toEqual([true, true]);
  });

  it('answers a request in flight, then closes its kept-alive connection', async () => {
    const slow = slowRoute();
    const { app, port } = await serve([slow.plugin]);
    const socket = await openSocket(port);
    const bytes = received(socket);
    socket.write(requestBytes('GET /test/slow HTTP/1.1'));
    await slow.inside;
    const closing = closeWithin(app, 10_000, [socket]);
    // The stop has begun (its preClose hooks run at once): the handler answers only now.
    await new Promise((resolve) => setTimeout(resolve, 50));
    slow.release();
    expect(await closing).toBe('closed');
    const [answer, ...more] = parseResponses(await bytes);
    expect(answer?.status, answer?.body).toBe(200);
    expect(answer?.json).toEqual({ done: true });
    expect(more).toEqual([]);
  });

  it('closes a kept-alive connection that is idle, after the answers it had', async () => {
    const { app, port } = await serve();
    const socket = await openSocket(port);
    const bytes = received(socket);
    socket.write(api());
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    expect(await closeWithin(app, 10_000, [socket])).toBe('closed');
    const [me] = parseResponses(await bytes);
    expect(me?.status, me?.body).toBe(200);
    expect(me?.headers.connection).toBe('keep-alive');
  });

  it('waits for a request in flight no longer than the grace, then closes its connection', async () => {
    const slow = slowRoute();
    const { app, port } = await serve([slow.plugin], 300);
    const socket = await openSocket(port);
    const bytes = received(socket);
    socket.write(requestBytes('GET /test/slow HTTP/1.1'));
    await slow.inside;
    try {
      expect(await closeWithin(app, 10_000, [socket])).toBe('closed');
      // Cut off unanswered: the handler never got to answer.
      expect((await bytes).length).toBe(0);
    } finally {
      slow.release();
    }
  });

  it('lets the whole service stop while a client holds a connection it sends nothing on', async () => {
    // What held test/metrics/metrics.test.ts's stop on a loaded machine: fetch had opened a
    // spare connection it never used.
    const running = await startTestService({ DATABASE_URL: t.database.url });
    const silent = await openSocket(Number(new URL(running.url).port));
    const ended = closesWithin(silent, 20_000);
    const stopped = await settlesWithin(running.stop(), 20_000);
    silent.destroy();
    await running.stop();
    expect(stopped, 'the stop was still waiting after 20 s').toBe(true);
    expect(await ended).toBe(true);
  });
});
