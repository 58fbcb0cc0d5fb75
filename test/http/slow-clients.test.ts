import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { listenOnLoopback } from '../helpers/listening.js';
import { openSocket, parseResponses, rawRequest, requestBytes } from '../helpers/raw-http.js';

/**
 * Issue 9 item 5: a slow-loris client cannot hold the server's sockets. The bounds are set
 * short here (1 s) so the test is quick; what is asserted is that every slow connection is
 * closed by the server while it is still trickling, not how fast.
 */
let t: TestApp;
let port: number;
let token: string;

beforeAll(async () => {
  t = await buildTestApp({
    connection: { headersTimeoutMs: 1_000, requestTimeoutMs: 2_000, keepAliveTimeoutMs: 1_000 },
  });
  port = await listenOnLoopback(t.app);
  token = (await (await t.createOrg()).key()).token;
});
afterAll(() => t.close());

/** A connection whose received bytes and end are recorded. */
interface Watched {
  socket: Socket;
  received: () => Buffer;
  closed: () => boolean;
}

async function watched(): Promise<Watched> {
  const socket = await openSocket(port);
  let buffer = Buffer.alloc(0);
  let closed = false;
  socket.on('data', (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    closed = true;
  });
  return { socket, received: () => buffer, closed: () => closed };
}

describe('slow-loris', () => {
  it('connections trickling headers are answered 408 and closed, while a normal request is served', async () => {
    const slow = await Promise.all(Array.from({ length: 60 }, () => watched()));
    for (const c of slow) c.socket.write('GET /api/v1/orgs/me HTTP/1.1\r\nHost: localhost\r\nX-Slow: ');
    // One more header byte every 100 ms, for as long as the server keeps the connection.
    const trickle = setInterval(() => {
      for (const c of slow) if (!c.closed()) c.socket.write('a');
    }, 100);
    try {
      const normal = await rawRequest(
        port,
        requestBytes('GET /api/v1/orgs/me HTTP/1.1', { Authorization: `Bearer ${token}` }),
      );
      expect(normal.status).toBe(200);
      await vi.waitFor(() => expect(slow.filter((c) => !c.closed())).toHaveLength(0), {
        timeout: 20_000,
        interval: 100,
      });
    } finally {
      clearInterval(trickle);
    }
    for (const c of slow) {
      const [answer] = parseResponses(c.received());
      expect(answer?.status).toBe(408);
      expect(answer?.json).toMatchObject({ error: { type: 'request_timeout', status: 408 } });
      expect(answer?.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
    // And the server still serves afterwards.
    expect(
      (
        await rawRequest(
          port,
          requestBytes('GET /api/v1/orgs/me HTTP/1.1', { Authorization: `Bearer ${token}` }),
        )
      ).status,
    ).toBe(200);
  });

  it('connections that send nothing at all are closed', async () => {
    const silent = await Promise.all(Array.from({ length: 20 }, () => watched()));
    await vi.waitFor(() => expect(silent.filter((c) => !c.closed())).toHaveLength(0), {
      timeout: 20_000,
      interval: 100,
    });
  });

  it('a body trickled slower than the request timeout is cut off', async () => {
    const c = await watched();
    c.socket.write(
      requestBytes(
        'POST /internal/auth/sign-in HTTP/1.1',
        { 'Content-Type': 'application/json', 'Content-Length': '100000' },
        '{',
      ),
    );
    const trickle = setInterval(() => {
      if (!c.closed()) c.socket.write(' ');
    }, 100);
    try {
      await vi.waitFor(() => expect(c.closed()).toBe(true), { timeout: 20_000, interval: 100 });
    } finally {
      clearInterval(trickle);
    }
  });
});

describe('a routed request whose body does not arrive whole', () => {
  const post = () =>
    requestBytes(
      'POST /api/v1/assets?x=1 HTTP/1.1',
      { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': '100' },
      '{"na',
    );

  /** The answer answers as the request it cuts off: its path, its own id, its rate-limit headers. */
  function expectAnswerOfTheRequest(answer: ReturnType<typeof parseResponses>[number] | undefined) {
    expect(answer?.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
    expect(answer?.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    expect(answer?.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
    expect(answer?.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer?.json).toMatchObject({
      error: { instance: '/api/v1/assets', request_id: answer?.headers['x-request-id'] },
    });
    expect(answer?.headers.connection).toBe('close');
  }

  it('is answered 408 after the request timeout, on its own path with its rate-limit headers', async () => {
    const answer = await rawRequest(port, post(), { timeoutMs: 15_000 });
    expect(answer.status).toBe(408);
    expect(answer.json).toMatchObject({ error: { type: 'request_timeout', status: 408 } });
    expectAnswerOfTheRequest(answer);
  });

  it('is answered 400 when the client half-closes before the body is complete', async () => {
    const c = await watched();
    c.socket.end(post());
    await vi.waitFor(() => expect(c.closed()).toBe(true), { timeout: 10_000, interval: 50 });
    const [answer] = parseResponses(c.received());
    expect(answer?.status).toBe(400);
    expect(answer?.json).toMatchObject({
      error: {
        type: 'bad_request',
        detail: 'The connection was closed before the request body was complete',
      },
    });
    expectAnswerOfTheRequest(answer);
  });
});

describe('keep-alive', () => {
  it('an idle keep-alive connection is closed by the server after the keep-alive timeout', async () => {
    const c = await watched();
    c.socket.write(requestBytes('GET /api/v1/orgs/me HTTP/1.1', { Authorization: `Bearer ${token}` }));
    await vi.waitFor(() => expect(parseResponses(c.received())).toHaveLength(1));
    const [answer] = parseResponses(c.received());
    expect(answer?.status).toBe(200);
    expect(answer?.headers['keep-alive']).toBe('timeout=1');
    await vi.waitFor(() => expect(c.closed()).toBe(true), { timeout: 20_000, interval: 100 });
  });
});
