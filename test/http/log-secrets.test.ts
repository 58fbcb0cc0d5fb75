/**
 * Logs keep no secrets (docs/operations.md "Secrets in the logs"): API keys, session
 * cookies and passwords sent in a query string, a header or a body appear in no log line,
 * for an answered request, a refused one, one no route takes, one the server's parser
 * refuses on the socket, and one a route logs whole (as a warning about a request might).
 */
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { listenOnLoopback } from '../helpers/listening.js';

let t: TestApp;
let port: number;
let token: string;
let output = '';

/** A route that logs its request whole, headers, query and body included. */
const loudRoute: FastifyPluginAsync = async (app) => {
  app.post('/log-probe', async (request) => {
    request.log.warn(
      { req: request, url: request.url, headers: request.headers, query: request.query, body: request.body },
      'probe',
    );
    return { ok: true };
  });
};

beforeAll(async () => {
  const stream = new Writable({
    write(chunk, _encoding, done) {
      output += String(chunk);
      done();
    },
  });
  t = await buildTestApp({ logger: { level: 'info', stream }, routes: [loudRoute] });
  port = await listenOnLoopback(t.app);
  token = (await (await t.createOrg()).key()).token;
});
afterAll(() => t.close());

it('no query-string secret, Authorization header, cookie or password appears in the log', async () => {
  const answered = await t.app.inject({
    method: 'GET',
    url: '/api/v1/locations?limit=1&token=q-secret-1&api_key=q-secret-2',
    headers: { authorization: `Bearer ${token}`, cookie: 'tagtrail_session=c-secret-1' },
  });
  // Refused for its unknown parameters (strict inputs), and logged all the same.
  expect(answered.statusCode).toBe(400);
  const refused = await t.app.inject({
    method: 'GET',
    url: '/api/v1/locations?password=q-secret-3',
    headers: { authorization: 'Bearer h-secret-1' },
  });
  expect(refused.statusCode).toBe(401);
  const unknown = await t.app.inject({ method: 'GET', url: '/api/v1/nowhere?secret=q-secret-4' });
  expect(unknown.statusCode).toBe(404);
  const signIn = await t.app.inject({
    method: 'POST',
    url: '/internal/auth/sign-in?password=q-secret-5',
    headers: { 'content-type': 'application/json', cookie: 'tagtrail_session=c-secret-2' },
    payload: JSON.stringify({ email: 'nobody@example.com', password: 'b-secret-1' }),
  });
  expect(signIn.statusCode).toBeGreaterThanOrEqual(400);
  const probe = await t.app.inject({
    method: 'POST',
    url: '/log-probe?page=2&token=q-secret-6&api_key=q-secret-7&secret=q-secret-8&password=q-secret-9',
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer h-secret-2',
      cookie: 'tagtrail_session=c-secret-3; tagtrail_device=c-secret-4',
    },
    payload: JSON.stringify({ password: 'b-secret-2', token: 'b-secret-3' }),
  });
  expect(probe.statusCode).toBe(200);

  // Refused by the HTTP parser (a header line without a colon): logged from the socket.
  const socket = connect(port, '127.0.0.1');
  socket.write(
    `GET /api/v1/locations?token=q-secret-10 HTTP/1.1\r\nhost: x\r\ncookie: c-secret-5\r\nbroken\r\n\r\n`,
  );
  socket.resume();
  await new Promise((resolve) => socket.once('close', resolve));

  await vi.waitFor(() => expect(output).toContain('"msg":"probe"'));
  await vi.waitFor(() => expect(output).toContain('"msg":"client error"'));
  // The requests were logged, with the paths and the fields that are no secret.
  expect(output).toContain('"path":"/api/v1/locations"');
  // What is no secret stays readable: the other parameters, the other headers.
  expect(output).toContain('/log-probe?page=2&token=[Redacted]');
  expect(output).toContain('"user-agent":"lightMyRequest"');
  expect(output).not.toContain(token);
  expect(output.match(/[a-z]-secret-\d+/g) ?? []).toEqual([]);
});
