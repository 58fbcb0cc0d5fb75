import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_CONNECTION_LIMITS } from '../../src/http/connections.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { listenOnLoopback } from '../helpers/listening.js';
import {
  openSocket,
  parseResponses,
  type RawResponse,
  rawRequest,
  requestBytes,
} from '../helpers/raw-http.js';

/**
 * Issue 9 item 4: every answer in the error envelope, including what Fastify and Node's HTTP
 * server answer before a route runs. Driven over real TCP connections, since `inject`
 * bypasses Node's parser, its limits and Fastify's URL decoding.
 */
let t: TestApp;
let port: number;
let token: string;
const BODY_LIMIT = 4096;

beforeAll(async () => {
  t = await buildTestApp({ bodyLimit: BODY_LIMIT });
  port = await listenOnLoopback(t.app);
  token = (await (await t.createOrg()).key()).token;
});
afterAll(() => t.close());

function expectEnvelope(res: RawResponse, status: number, type: string, instance?: string): void {
  expect(res.error, 'no connection reset before the answer was read').toBeUndefined();
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const error = (res.json as { error?: Record<string, unknown> } | undefined)?.error;
  expect(error, `an envelope, got ${res.body.slice(0, 200)}`).toBeDefined();
  expect(Object.keys(error!).sort()).toEqual(['detail', 'instance', 'request_id', 'status', 'title', 'type']);
  expect(error).toMatchObject({ type, status, title: expect.any(String), detail: expect.any(String) });
  expect(error!.request_id).toBe(res.headers['x-request-id']);
  expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  if (instance !== undefined) expect(error!.instance).toBe(instance);
}

const expectRateLimitHeaders = (res: RawResponse) => {
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    expect(res.headers[name], name).toMatch(/^\d+$/);
  }
};

describe('URL decoding errors (Fastify FST_ERR_BAD_URL)', () => {
  it('/api/: 400 bad_request in the envelope with the rate-limit headers', async () => {
    const res = await rawRequest(port, requestBytes('GET /api/v1/locations/%ff HTTP/1.1'));
    expectEnvelope(res, 400, 'bad_request', '/api/v1/locations/%ff');
    expectRateLimitHeaders(res);
    expect(res.body).not.toContain('FST_ERR');
  });

  it('/internal/: 400 bad_request in the envelope', async () => {
    const res = await rawRequest(port, requestBytes('GET /internal/readers/%e0%a4%a HTTP/1.1'));
    expectEnvelope(res, 400, 'bad_request', '/internal/readers/%e0%a4%a');
  });
});

describe('404 of unknown paths', () => {
  it.each(['/api/v1/nope', '/api/v2/assets', '/internal/nope'])('%s: 404 not_found', async (path) => {
    const res = await rawRequest(port, requestBytes(`GET ${path} HTTP/1.1`));
    expectEnvelope(res, 404, 'not_found', path);
  });
});

describe('413: a body over the limit', () => {
  it('/api/: declared by Content-Length, answered before the body is read', async () => {
    const res = await rawRequest(
      port,
      requestBytes(
        'POST /api/v1/locations HTTP/1.1',
        { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': '5000000' },
        '{"name":"',
      ),
    );
    expectEnvelope(res, 413, 'payload_too_large', '/api/v1/locations');
  });

  it('not on a method the path does not declare: its 405 is answered before the body', async () => {
    const res = await rawRequest(
      port,
      requestBytes(
        'PUT /api/v1/locations HTTP/1.1',
        { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': '5000000' },
        '{"name":"',
      ),
    );
    expectEnvelope(res, 405, '405', '/api/v1/locations');
    expect(res.headers.allow).toBe('GET, HEAD, POST');
  });

  it('/internal/: a chunked body that grows past the limit', async () => {
    const chunk = 'x'.repeat(BODY_LIMIT + 100);
    const res = await rawRequest(
      port,
      requestBytes(
        'POST /internal/auth/sign-in HTTP/1.1',
        { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
        `${chunk.length.toString(16)}\r\n${chunk}\r\n0\r\n\r\n`,
      ),
    );
    expectEnvelope(res, 413, 'payload_too_large', '/internal/auth/sign-in');
  });
});

describe('414: an over-long URL', () => {
  it('a path segment over the router limit (Fastify FST_ERR_MAX_PARAM_LENGTH)', async () => {
    const path = `/api/v1/locations/${'1'.repeat(600)}`;
    const res = await rawRequest(port, requestBytes(`GET ${path} HTTP/1.1`));
    expectEnvelope(res, 414, 'uri_too_long', path);
    expect(res.body).not.toContain('FST_ERR');
  });

  it('a request line longer than the header limit (Node parser), on /internal/ too', async () => {
    for (const prefix of ['/api/v1/assets', '/internal/assets']) {
      const long = `${prefix}?q=${'a'.repeat(DEFAULT_CONNECTION_LIMITS.maxHeaderBytes + 1000)}`;
      const res = await rawRequest(port, requestBytes(`GET ${long} HTTP/1.1`));
      expectEnvelope(res, 414, 'uri_too_long', prefix);
      expect(res.closed, 'the connection is closed after the answer').toBe(true);
    }
  });
});

describe('431: headers over the limit', () => {
  it('one big header: 431 in the envelope, read by the client (not a reset)', async () => {
    const res = await rawRequest(
      port,
      requestBytes('GET /api/v1/orgs/me HTTP/1.1', {
        'X-Padding': 'p'.repeat(DEFAULT_CONNECTION_LIMITS.maxHeaderBytes),
      }),
    );
    expectEnvelope(res, 431, 'header_fields_too_large', '/api/v1/orgs/me');
    expect(res.closed).toBe(true);
  });

  it('many headers far over the limit on /internal/: still answered, not reset', async () => {
    const headers: Record<string, string> = {};
    for (let i = 0; i < 400; i++) headers[`X-H${i}`] = 'v'.repeat(250);
    const res = await rawRequest(port, requestBytes('GET /internal/session HTTP/1.1', headers));
    expectEnvelope(res, 431, 'header_fields_too_large', '/internal/session');
  });

  it('an 8 KiB Authorization header is read and answered 401, not reset', async () => {
    const res = await rawRequest(
      port,
      requestBytes('GET /api/v1/orgs/me HTTP/1.1', { Authorization: `Bearer ${'a'.repeat(8192)}` }),
    );
    expectEnvelope(res, 401, 'unauthorized', '/api/v1/orgs/me');
    expectRateLimitHeaders(res);
  });
});

describe('malformed requests (Node parser)', () => {
  it.each([
    ['a request line that is not HTTP', 'GARBAGE\r\n\r\n'],
    ['a header name with a space', 'GET /api/v1/orgs/me HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n'],
    ['an invalid HTTP version', 'GET /api/v1/orgs/me HTTP/9.9\r\nHost: x\r\n\r\n'],
    [
      'both Content-Length and chunked',
      'POST /internal/auth/sign-in HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}',
    ],
  ])('%s: 400 bad_request in the envelope', async (_name, bytes) => {
    const res = await rawRequest(port, bytes);
    expectEnvelope(res, 400, 'bad_request');
    expect(res.closed).toBe(true);
  });
});

describe("Node's own 417", () => {
  it('an Expect header other than 100-continue: 417 expectation_failed', async () => {
    const res = await rawRequest(
      port,
      requestBytes(
        'POST /api/v1/locations HTTP/1.1',
        { Expect: 'fly', 'Content-Type': 'application/json', 'Content-Length': '2' },
        '{}',
      ),
    );
    expectEnvelope(res, 417, 'expectation_failed', '/api/v1/locations');
  });
});

it('after an answer in the envelope, the server still serves new connections', async () => {
  const res = await rawRequest(
    port,
    requestBytes('GET /api/v1/orgs/me HTTP/1.1', { Authorization: `Bearer ${token}` }),
  );
  expect(res.status).toBe(200);
});

describe('503 while the server is closing (instead of Fastify’s own body)', () => {
  it('a request arriving on an open connection during close: 503 service_unavailable in the envelope', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let arrived: () => void = () => undefined;
    const heldArrived = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const closing = await buildTestApp({
      routes: [
        async (app) => {
          app.get('/test/held', async () => {
            arrived();
            await held;
            return { ok: true };
          });
        },
      ],
    });
    try {
      const socket = await openSocket(await listenOnLoopback(closing.app));
      let buffer = Buffer.alloc(0);
      socket.on('data', (chunk) => {
        buffer = Buffer.concat([buffer, chunk]);
      });
      socket.write(requestBytes('GET /test/held HTTP/1.1'));
      await heldArrived;
      const closed = closing.app.close();
      await vi.waitFor(() => expect(closing.app.server.listening).toBe(false));
      socket.write(requestBytes('GET /api/v1/orgs/me HTTP/1.1'));
      release();
      await vi.waitFor(() => expect(parseResponses(buffer)).toHaveLength(2), { timeout: 10_000 });
      const [first, second] = parseResponses(buffer);
      expect(first!.status).toBe(200);
      expectEnvelope({ ...second!, closed: true }, 503, 'service_unavailable', '/api/v1/orgs/me');
      expect(second!.headers['retry-after']).toMatch(/^\d+$/);
      expect(second!.headers.connection).toBe('close');
      socket.destroy();
      await closed;
    } finally {
      release();
      await closing.services.close();
      await closing.database.drop();
    }
  });
});

/**
 * The spec: X-RateLimit-* "on every public-surface response including errors". What Node
 * answers before a request exists reports the bucket the request would have been counted in
 * (per API key when its bearer token verifies, per client address otherwise), peeked: a
 * request that was never parsed takes no token. The 417 of a whole, parsed request takes one.
 */
describe('rate-limit headers on the raw answers of the public surface', () => {
  const LIMIT = 100;
  let r: TestApp;
  let rport: number;
  let auth: Record<string, string>;
  const rateOf = (res: RawResponse) => ({
    limit: Number(res.headers['x-ratelimit-limit']),
    remaining: Number(res.headers['x-ratelimit-remaining']),
    reset: Number(res.headers['x-ratelimit-reset']),
  });
  /** A counted request in the key's bucket (with `auth`) or the address's (401 without): its remaining. */
  async function counted(headers: Record<string, string> = {}): Promise<number> {
    const res = await rawRequest(rport, requestBytes('GET /api/v1/orgs/me HTTP/1.1', headers));
    expect(res.status).toBe(Object.keys(headers).length > 0 ? 200 : 401);
    return rateOf(res).remaining;
  }
  /** The raw answer reports `before` and took nothing: the next counted request has one less. */
  async function expectPeeked(res: RawResponse, headers: Record<string, string>, before: number) {
    expectRateLimitHeaders(res);
    expect(rateOf(res)).toMatchObject({ limit: LIMIT, remaining: before });
    expect(await counted(headers)).toBe(before - 1);
  }

  beforeAll(async () => {
    r = await buildTestApp({
      // One token back every 6 minutes: remaining does not move while the tests run.
      rateLimit: new MemoryRateLimitStore({ limit: LIMIT, windowSeconds: 36_000 }),
      connection: { headersTimeoutMs: 500 },
    });
    rport = await listenOnLoopback(r.app);
    auth = { Authorization: `Bearer ${(await (await r.createOrg()).key()).token}` };
  });
  afterAll(() => r.close());

  it('a 401 without a key: the headers of the client address bucket', async () => {
    const first = await counted();
    expect(await counted()).toBe(first - 1);
  });

  it.each([
    ['with a key', true],
    ['without a key', false],
  ])(
    '408: headers that never finish (%s): the address bucket, since Node keeps none of the head',
    async (_, keyed) => {
      const before = await counted();
      const res = await rawRequest(
        rport,
        `GET /api/v1/orgs/me HTTP/1.1\r\nHost: localhost\r\n${keyed ? `Authorization: ${auth.Authorization}\r\n` : ''}X-Slow: `,
      );
      expectEnvelope(res, 408, 'request_timeout', '/');
      await expectPeeked(res, {}, before);
    },
  );

  it('400: a malformed request line whose target reads as /api/', async () => {
    const before = await counted();
    const res = await rawRequest(rport, requestBytes('GARBAGE /api/v1/orgs/me HTTP/1.1'));
    expectEnvelope(res, 400, 'bad_request', '/api/v1/orgs/me');
    await expectPeeked(res, {}, before);
  });

  it('400: an invalid header after the key: the key bucket', async () => {
    const before = await counted(auth);
    const res = await rawRequest(
      rport,
      `GET /api/v1/orgs/me HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth.Authorization}\r\nBad Header: y\r\n\r\n`,
    );
    expectEnvelope(res, 400, 'bad_request', '/api/v1/orgs/me');
    await expectPeeked(res, auth, before);
  });

  it('431: a 40 KB header after the key: the key bucket', async () => {
    const before = await counted(auth);
    const res = await rawRequest(
      rport,
      requestBytes('GET /api/v1/orgs/me HTTP/1.1', { ...auth, 'X-Padding': 'p'.repeat(40 * 1024) }),
    );
    expectEnvelope(res, 431, 'header_fields_too_large', '/api/v1/orgs/me');
    await expectPeeked(res, auth, before);
  });

  it('414: a request line over the header limit', async () => {
    const before = await counted();
    const long = `/api/v1/assets?q=${'a'.repeat(DEFAULT_CONNECTION_LIMITS.maxHeaderBytes + 1000)}`;
    const res = await rawRequest(rport, requestBytes(`GET ${long} HTTP/1.1`));
    expectEnvelope(res, 414, 'uri_too_long', '/api/v1/assets');
    await expectPeeked(res, {}, before);
  });

  it('417: a whole request, counted like any other (one token from the key bucket)', async () => {
    const before = await counted(auth);
    const res = await rawRequest(
      rport,
      requestBytes('GET /api/v1/orgs/me HTTP/1.1', { ...auth, Expect: 'foo' }),
    );
    expectEnvelope(res, 417, 'expectation_failed', '/api/v1/orgs/me');
    expect(rateOf(res)).toMatchObject({ limit: LIMIT, remaining: before - 1 });
    expect(await counted(auth)).toBe(before - 2);
  });

  it('no rate-limit headers where the surface is not public or cannot be read', async () => {
    for (const bytes of [
      'GARBAGE\r\n\r\n',
      requestBytes('GARBAGE /internal/session HTTP/1.1'),
      requestBytes('GET /internal/session HTTP/1.1', { 'X-Padding': 'p'.repeat(40 * 1024) }),
    ]) {
      const res = await rawRequest(rport, bytes);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });

  it('the bare /openapi.json and /openapi.yaml 301s carry the headers', async () => {
    for (const path of ['/openapi.json', '/openapi.yaml']) {
      const before = await counted();
      const res = await rawRequest(rport, requestBytes(`GET ${path} HTTP/1.1`));
      expect(res.status).toBe(301);
      expect(res.headers.location).toBe(`/api${path}`);
      expect(rateOf(res)).toMatchObject({ limit: LIMIT, remaining: before - 1 });
    }
  });
});
