/**
 * The drain before a stop (src/http/drain.ts), over real sockets: once the lame duck begins,
 * /readyz answers 503 at once while every other route serves, and each response closes its
 * connection, including a kept-alive connection opened before the drain and a request that
 * was in flight when it began.
 */
import type { Socket } from 'node:net';
import type { FastifyPluginAsync } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildServer } from '../../src/app.js';
import { LameDuck } from '../../src/http/drain.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { listenOnLoopback } from '../helpers/listening.js';
import { openSocket, parseResponses, rawRequest, requestBytes } from '../helpers/raw-http.js';

let t: TestApp;
let token: string;

beforeAll(async () => {
  t = await buildTestApp();
  token = (await (await t.createOrg('Lame Duck Logistics')).key(['assets:read'])).token;
});
afterAll(() => t?.close());

/** A server of the test's services with its own lame duck, listening on a free port. */
async function serve(routes: FastifyPluginAsync[] = []): Promise<{ app: App; port: number; duck: LameDuck }> {
  const duck = new LameDuck();
  const app = await buildServer(t.services, { bodyLimit: 1048576, lameDuck: duck, routes });
  return { app, port: await listenOnLoopback(app), duck };
}

/** Writes `bytes` on `socket` and resolves with the responses once `count` are complete. */
function exchange(socket: Socket, bytes: string, count = 1) {
  return new Promise<ReturnType<typeof parseResponses>>((resolve, reject) => {
    let buffer = Buffer.alloc(0);
    const timer = setTimeout(() => reject(new Error(`no response: ${buffer.toString('latin1')}`)), 10_000);
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const responses = parseResponses(buffer);
      if (responses.length < count) return;
      clearTimeout(timer);
      socket.off('data', onData);
      resolve(responses);
    };
    socket.on('data', onData);
    socket.write(bytes);
  });
}

/** Whether the server closes `socket` within `ms`. */
const closedWithin = (socket: Socket, ms: number) =>
  new Promise<boolean>((resolve) => {
    if (socket.readableEnded || socket.destroyed) return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    socket.once('end', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });

const api = (extra: Record<string, string> = {}) =>
  requestBytes('GET /api/v1/orgs/me HTTP/1.1', { authorization: `Bearer ${token}`, ...extra });

describe('the lame duck before a stop', () => {
  it('answers /readyz 503 at once, not from the cached 200, naming the shutdown', async () => {
    const { app, port, duck } = await serve();
    try {
      // A 200 result is reused for a second; the drain must not wait for it to expire.
      expect((await rawRequest(port, requestBytes('GET /readyz HTTP/1.1'))).status).toBe(200);
      duck.begin();
      const ready = await rawRequest(port, requestBytes('GET /readyz HTTP/1.1'), { closeWithinMs: 1_000 });
      expect(ready.status).toBe(503);
      expect(ready.json).toEqual({ status: 'not_ready', checks: { shutdown: 'draining' } });
      expect(ready.headers['retry-after']).toBe('5');
      expect(ready.headers['cache-control']).toBe('no-store');
      expect(ready.headers.connection).toBe('close');
      expect(ready.closed).toBe(true);
      // Liveness is not readiness: the process is alive and must not be restarted.
      const live = await rawRequest(port, requestBytes('GET /healthz HTTP/1.1'), { closeWithinMs: 1_000 });
      expect(live.status).toBe(200);
      expect(live.closed).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('still serves the API, each response closing its connection', async () => {
    const { app, port, duck } = await serve();
    try {
      duck.begin();
      const me = await rawRequest(port, api(), { closeWithinMs: 1_000 });
      expect(me.status, me.body).toBe(200);
      expect(me.json).toMatchObject({ data: { name: 'Lame Duck Logistics' } });
      expect(me.headers.connection).toBe('close');
      expect(me.closed).toBe(true);
      // Errors too: a client told to go away goes away whatever it was answered.
      const missing = await rawRequest(port, requestBytes('GET /api/v1/nothing HTTP/1.1'), {
        closeWithinMs: 1_000,
      });
      expect(missing.status).toBe(404);
      expect(missing.closed).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('answers a request on a connection kept alive from before the drain, then closes it', async () => {
    const { app, port, duck } = await serve();
    const socket = await openSocket(port);
    try {
      const [before] = await exchange(socket, api());
      expect(before?.status).toBe(200);
      expect(before?.headers.connection).toBe('keep-alive');
      // Idle and open when the drain begins: the client's next request is answered, not refused.
      duck.begin();
      const [during] = await exchange(socket, api());
      expect(during?.status, during?.body).toBe(200);
      expect(during?.headers.connection).toBe('close');
      expect(await closedWithin(socket, 2_000)).toBe(true);
    } finally {
      socket.destroy();
      await app.close();
    }
  });

  it('closes the connection of a request that was in flight when the drain began', async () => {
    let release: () => void = () => undefined;
    let arrived: () => void = () => undefined;
    const inside = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const slow: FastifyPluginAsync = async (app) => {
      app.get('/test/slow', async () => {
        arrived();
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return { done: true };
      });
    };
    const { app, port, duck } = await serve([slow]);
    try {
      const answer = rawRequest(port, requestBytes('GET /test/slow HTTP/1.1'), { closeWithinMs: 1_000 });
      await inside;
      duck.begin();
      release();
      const res = await answer;
      expect(res.status, res.body).toBe(200);
      expect(res.headers.connection).toBe('close');
      expect(res.closed).toBe(true);
    } finally {
      await app.close();
    }
  });
});
