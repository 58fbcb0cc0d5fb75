/**
 * The request target however it is spelled: absolute form (`GET http://host/path`, which
 * HTTP/1.1 servers must accept) and percent-escaped unreserved characters reach the same
 * route with the same checks (API key, scope, rate limit, media type) as the plain path.
 * Sent over a real socket: the request line is what is under test.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { listenOnLoopback } from '../helpers/listening.js';

let t: TestApp;
let port: number;
let token: string;
let readOnly: string;

beforeAll(async () => {
  t = await buildTestApp();
  port = await listenOnLoopback(t.app);
  const org = await t.createOrg('Target');
  token = (await org.key()).token;
  readOnly = (await org.key(['assets:read'])).token;
});
afterAll(() => t.close());

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: { data?: { name?: string }; error?: { type: string; detail: string; instance: string } };
}

/** One request, its request line as given, on a connection of its own. */
function send(line: string, headers: Record<string, string> = {}, body = ''): Promise<RawAnswer> {
  const head = Object.entries({ host: 'x', connection: 'close', ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const length = body ? `content-length: ${Buffer.byteLength(body)}\r\n` : '';
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [top, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...lines] = top!.split('\r\n');
      const parsed: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        parsed[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({
        status: Number(statusLine!.split(' ')[1]),
        headers: parsed,
        body: JSON.parse(rest.join('\r\n\r\n')),
      });
    });
    socket.write(`${line} HTTP/1.1\r\n${head}${length}\r\n${body}`);
  });
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe.each([
  ['absolute form', 'http://x/api/v1/orgs/me'],
  ['absolute form, upper-case scheme and a port', 'HTTP://X:80/api/v1/orgs/me'],
  ['a percent-escaped letter', '/%61pi/v1/orgs/me'],
  ['percent-escaped letters in every segment', '/%61%70%69/%76%31/%6F%72%67%73/%6d%65'],
])('%s', (_name, target) => {
  it('without a key: 401 with the rate-limit headers, instance the path', async () => {
    const res = await send(`GET ${target}`);
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({
      type: 'unauthorized',
      detail: 'Missing authorization header',
      instance: '/api/v1/orgs/me',
    });
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
    expect(res.headers['x-ratelimit-remaining']).toBeDefined();
  });

  it('with a key: the organization, as for the plain path', async () => {
    const res = await send(`GET ${target}`, bearer(token));
    expect(res.status).toBe(200);
    expect(res.body.data?.name).toBe('Target');
  });
});

it('a write in absolute form is checked for its scope and media type', async () => {
  const json = { 'content-type': 'application/json' };
  const body = JSON.stringify({ name: 'Dock' });
  const missingScope = await send('POST http://x/api/v1/locations', { ...bearer(readOnly), ...json }, body);
  expect(missingScope.status).toBe(403);
  const textPlain = await send(
    'POST http://x/api/v1/locations',
    { ...bearer(token), 'content-type': 'text/plain' },
    body,
  );
  expect(textPlain.status).toBe(415);
  const noKey = await send('POST /%61pi/v1/locations', { 'content-type': 'text/plain' }, body);
  expect(noKey.status).toBe(401);
  const created = await send('POST http://x/api/v1/locations', { ...bearer(token), ...json }, body);
  expect(created.status).toBe(201);
});

it('an escaped character that is not unreserved stays escaped: no route', async () => {
  const res = await send('GET /api%2Fv1/orgs/me', bearer(token));
  expect(res.status).toBe(404);
  expect(res.body.error?.type).toBe('not_found');
});

describe('CONNECT, which Node hands to the server apart from requests', () => {
  it('on a declared path: 405 with Allow, in the envelope, then the connection closes', async () => {
    const res = await send('CONNECT /api/v1/orgs/me', bearer(token));
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.body.error?.type).toBe('405');
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
  });

  it('to a host and port, as a tunnel asks: 404 in the envelope', async () => {
    const res = await send('CONNECT example.com:443');
    expect(res.status).toBe(404);
    expect(res.body.error?.type).toBe('not_found');
  });
});
