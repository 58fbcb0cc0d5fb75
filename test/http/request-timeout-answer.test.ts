import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { listenOnLoopback } from '../helpers/listening.js';
import { rawRequest } from '../helpers/raw-http.js';

/**
 * TAGTRAIL_HEADERS_TIMEOUT_SECONDS above the request timeout's default (60 s), the request
 * timeout left unset: the whole request gets the headers' bound (README, "Configuration").
 * The 408 said the setting's default instead ("headers within 300 s, the whole request
 * within 60 s"), a bound that did not apply and cannot hold beside the first.
 */
describe('the 408 of a request timeout following a longer headers timeout', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await buildTestApp({ connection: { headersTimeoutMs: 1_000, requestTimeoutMs: 500 } });
    port = await listenOnLoopback(t.app);
  });
  afterAll(() => t.close());

  it('names the bound that applies to the whole request', async () => {
    const res = await rawRequest(port, 'GET /api/v1/orgs/me HTTP/1.1\r\nHost: localhost\r\nX-Slow: ');
    expect(res.status).toBe(408);
    expect(res.json).toMatchObject({
      error: {
        type: 'request_timeout',
        detail: 'The request did not arrive in time (headers within 1 s, the whole request within 1 s)',
      },
    });
  });
});
