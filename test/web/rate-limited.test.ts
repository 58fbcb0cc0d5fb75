import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, api } from '../../web/src/api.js';
import { reopenDelayMs } from '../../web/src/live.js';

/**
 * The web app meeting its session's request budget (docs/web-app.md "Sessions and CSRF"):
 * the service's 429 shows as its detail, and the live stream waits as long as asked
 * before reopening, instead of being refused again every 3 s.
 */
function answer(status: number, body: unknown, headers: Record<string, string> = {}) {
  vi.stubGlobal(
    'fetch',
    vi.fn(
      async () =>
        new Response(JSON.stringify(body), {
          status,
          headers: { 'content-type': 'application/json', ...headers },
        }),
    ),
  );
}

async function failure(): Promise<ApiError> {
  const e = await api('/internal/session').then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ApiError);
  return e as ApiError;
}

describe('a 429 from the service', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  const detail = 'Too many requests from this session; try again in 12 seconds';
  const limited = { error: { type: 'rate_limited', title: 'Too Many Requests', status: 429, detail } };

  it('is an ApiError with the detail to show and the Retry-After', async () => {
    answer(429, limited, { 'retry-after': '12' });
    const e = await failure();
    expect(e).toMatchObject({ status: 429, type: 'rate_limited', retryAfterSeconds: 12 });
    expect(e.messages).toEqual([detail]);
  });

  it('reopens the live stream after Retry-After, never sooner than 3 s', async () => {
    answer(429, limited, { 'retry-after': '12' });
    expect(reopenDelayMs(await failure())).toBe(12_000);
    answer(429, limited, { 'retry-after': '1' });
    expect(reopenDelayMs(await failure())).toBe(3_000);
  });

  it('without a usable Retry-After (a proxy’s), keeps the 3 s and shows the status line', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(
        async () =>
          new Response('<html>slow down</html>', {
            status: 429,
            statusText: 'Too Many Requests',
            headers: { 'retry-after': 'Wed, 21 Oct 2026 07:28:00 GMT' },
          }),
      ),
    );
    const e = await failure();
    expect(e.retryAfterSeconds).toBeNull();
    expect(e.messages).toEqual(['429 Too Many Requests']);
    expect(reopenDelayMs(e)).toBe(3_000);
    expect(reopenDelayMs(new Error('network'))).toBe(3_000);
    expect(reopenDelayMs(null)).toBe(3_000);
  });
});
