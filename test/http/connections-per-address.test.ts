import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunningService } from '../../src/runtime.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { listenOnLoopback } from '../helpers/listening.js';
import { openSocket, parseResponses, requestBytes } from '../helpers/raw-http.js';
import { startTestService } from '../helpers/service.js';

/**
 * One client address cannot hold the server's file descriptors: its connections past the
 * bound are closed unanswered, while those it holds are served. The bound is 3 here so the
 * test is quick; the default is DEFAULT_CONNECTION_LIMITS.maxConnectionsPerAddress.
 */
const BOUND = 3;
let t: TestApp;
let port: number;

beforeAll(async () => {
  t = await buildTestApp({ connection: { maxConnectionsPerAddress: BOUND } });
  port = await listenOnLoopback(t.app);
});
afterAll(() => t.close());

/** Resolves with what the server sent before it closed the socket. */
function untilClosed(socket: Socket): Promise<Buffer> {
  let received = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    received = Buffer.concat([received, chunk]);
  });
  socket.on('error', () => undefined);
  return new Promise((resolve) => socket.once('close', () => resolve(received)));
}

/** One request on an open socket; resolves with its status. */
function statusOn(socket: Socket): Promise<number> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const [response] = parseResponses(received);
      if (response) {
        socket.off('data', onData);
        resolve(response.status);
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error('closed before an answer')));
    socket.write(requestBytes('GET /healthz HTTP/1.1'));
  });
}

describe('connections per client address', () => {
  it('closes connections past the bound unanswered, serves those within it, and admits a new one once one closes', async () => {
    const held = await Promise.all(Array.from({ length: BOUND }, () => openSocket(port)));
    try {
      const extra = await openSocket(port);
      const closed = untilClosed(extra);
      extra.write(requestBytes('GET /healthz HTTP/1.1'));
      expect((await closed).length).toBe(0);
      for (const socket of held) expect(await statusOn(socket)).toBe(200);

      await untilClosed(held.pop()!.end());
      // The server counts the slot free once its side has closed too, a moment after ours.
      await vi.waitFor(async () => {
        const next = await openSocket(port);
        held.push(next);
        expect(await statusOn(next)).toBe(200);
      });
    } finally {
      for (const socket of held) socket.destroy();
    }
  });
});

describe('TAGTRAIL_HTTP_MAX_CONNECTIONS_PER_ADDRESS', () => {
  let running: RunningService | undefined;
  afterAll(() => running?.stop());

  it('sets the bound of the running service', async () => {
    running = await startTestService({
      DATABASE_URL: t.database.url,
      TAGTRAIL_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '2',
    });
    const servicePort = Number(new URL(running.url).port);
    const held = await Promise.all([openSocket(servicePort), openSocket(servicePort)]);
    try {
      for (const socket of held) expect(await statusOn(socket)).toBe(200);
      const extra = await openSocket(servicePort);
      const closed = untilClosed(extra);
      extra.write(requestBytes('GET /healthz HTTP/1.1'));
      expect((await closed).length).toBe(0);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });
});
