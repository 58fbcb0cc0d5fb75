import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_SWEEP_MS, MemoryRateLimitStore } from './memory-store.js';
import { decide } from './types.js';

/** A clock the test moves by hand. */
function manualClock(start = 1_700_000_000_000) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

describe('MemoryRateLimitStore', () => {
  const stores: MemoryRateLimitStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  /** limit 3 per 60 s: one token back every 20 s. */
  function store(limit = 3, windowSeconds = 60) {
    const clock = manualClock();
    const s = new MemoryRateLimitStore({ limit, windowSeconds }, clock.now);
    stores.push(s);
    return { s, clock };
  }

  it('allows a burst up to the limit, then denies with retryAfter >= 1', async () => {
    const { s } = store();
    const decisions = [];
    for (let i = 0; i < 5; i++) decisions.push(await s.take('key:a'));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0, 0]);
    for (const d of decisions) expect(d.limit).toBe(3);
    for (const d of decisions.slice(0, 3)) expect(d.retryAfterSeconds).toBe(0);
    for (const d of decisions.slice(3)) {
      expect(d.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(Number.isInteger(d.retryAfterSeconds)).toBe(true);
    }
    // Empty bucket, no time passed: a whole token takes 20 s.
    expect(decisions[3]!.retryAfterSeconds).toBe(20);
  });

  it('keeps separate buckets per id', async () => {
    const { s } = store(1);
    expect((await s.take('key:a')).allowed).toBe(true);
    expect((await s.take('key:a')).allowed).toBe(false);
    expect((await s.take('key:b')).allowed).toBe(true);
    expect((await s.take('ip:127.0.0.1')).allowed).toBe(true);
  });

  it('refills over time at limit/window tokens per second', async () => {
    const { s, clock } = store();
    for (let i = 0; i < 3; i++) await s.take('k');
    expect((await s.take('k')).allowed).toBe(false);

    clock.advance(10_000); // half a token
    const half = await s.take('k');
    expect(half.allowed).toBe(false);
    expect(half.retryAfterSeconds).toBe(10);

    clock.advance(10_000); // one whole token
    const one = await s.take('k');
    expect(one.allowed).toBe(true);
    expect(one.remaining).toBe(0);
    expect((await s.take('k')).allowed).toBe(false);

    clock.advance(60_000); // a full window refills the whole bucket...
    const full = await s.take('k');
    expect(full.allowed).toBe(true);
    expect(full.remaining).toBe(2);
  });

  it('a clock stepped back refills nothing and takes nothing, as the Redis store', async () => {
    const { s, clock } = store();
    await s.take('k');
    clock.advance(-3_600_000);
    const after = await s.take('k');
    expect(after).toMatchObject({ allowed: true, remaining: 1 });
    clock.advance(20_000); // one token back, counted from the stepped-back clock
    expect((await s.take('k')).remaining).toBe(1);
  });

  it('never refills above the limit', async () => {
    const { s, clock } = store();
    await s.take('k');
    clock.advance(24 * 3600 * 1000);
    const results = [];
    for (let i = 0; i < 4; i++) results.push((await s.take('k')).allowed);
    expect(results).toEqual([true, true, true, false]);
  });

  it('computes remaining and reset from the tokens left', async () => {
    const { s, clock } = store();
    // reset = seconds until the bucket is full again = (limit - tokens) / (limit / window)
    expect(await s.take('k')).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 20 });
    expect(await s.take('k')).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 40 });
    expect(await s.take('k')).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 60 });
    expect(await s.take('k')).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 60 });
    clock.advance(30_000); // 1.5 tokens back
    // 1.5 - 1 = 0.5 left: remaining floors to 0, reset rounds (3 - 0.5) / 0.05 = 50 up.
    expect(await s.take('k')).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 50 });
    clock.advance(5_000); // 0.75
    const denied = await s.take('k');
    expect(denied).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 45 });
    expect(denied.retryAfterSeconds).toBe(5);
  });

  it('rounds reset and retryAfter up to whole seconds', async () => {
    const { s, clock } = store(7, 10); // 0.7 tokens per second
    for (let i = 0; i < 7; i++) await s.take('k');
    clock.advance(123);
    const d = await s.take('k');
    expect(d.allowed).toBe(false);
    expect(Number.isInteger(d.retryAfterSeconds)).toBe(true);
    expect(Number.isInteger(d.resetSeconds)).toBe(true);
    // (1 - 0.0861) / 0.7 = 1.305... s; (7 - 0.0861) / 0.7 = 9.87... s
    expect(d.retryAfterSeconds).toBe(2);
    expect(d.resetSeconds).toBe(10);
  });

  it('sweep drops buckets that have refilled completely and keeps the others', async () => {
    const { s, clock } = store();
    await s.take('a'); // 2 left: full again after 20 s
    for (let i = 0; i < 3; i++) await s.take('b'); // empty: full after 60 s
    expect(s.size).toBe(2);

    s.sweep();
    expect(s.size).toBe(2);

    clock.advance(20_000);
    s.sweep();
    expect(s.size).toBe(1);

    clock.advance(39_999);
    s.sweep();
    expect(s.size).toBe(1);

    clock.advance(1);
    s.sweep();
    expect(s.size).toBe(0);

    // A swept bucket starts full again.
    expect(await s.take('b')).toMatchObject({ allowed: true, remaining: 2 });
  });
});

describe('decide', () => {
  it('takes one token when at least one is there', () => {
    expect(decide({ limit: 10, windowSeconds: 10 }, 10)).toEqual({
      tokens: 9,
      decision: { allowed: true, limit: 10, remaining: 9, resetSeconds: 1, retryAfterSeconds: 0 },
    });
  });

  it('takes nothing and names the wait when fewer than one is there', () => {
    expect(decide({ limit: 10, windowSeconds: 10 }, 0.25)).toEqual({
      tokens: 0.25,
      decision: { allowed: false, limit: 10, remaining: 0, resetSeconds: 10, retryAfterSeconds: 1 },
    });
  });
});

describe('peek', () => {
  it('reports the bucket as take would, without taking a token', async () => {
    const clock = { now: 1_700_000_000_000 };
    const s = new MemoryRateLimitStore({ limit: 3, windowSeconds: 60 }, () => clock.now);
    try {
      expect(await s.peek('k')).toMatchObject({ allowed: true, remaining: 3, resetSeconds: 0 });
      expect(s.size).toBe(0);
      await s.take('k');
      expect(await s.peek('k')).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 20 });
      expect(await s.peek('k')).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 20 });
      await s.take('k');
      await s.take('k');
      expect(await s.peek('k')).toMatchObject({
        allowed: false,
        remaining: 0,
        resetSeconds: 60,
        retryAfterSeconds: 20,
      });
      expect((await s.take('k')).allowed).toBe(false);
    } finally {
      await s.close();
    }
  });

  it('sweeps at most hourly, so a window of 30 days does not overflow the timer into a sweep each millisecond', async () => {
    const setIntervalSpy = vi.spyOn(globalThis, 'setInterval');
    const s = new MemoryRateLimitStore({ limit: 10, windowSeconds: 30 * 86_400 });
    try {
      const delay = setIntervalSpy.mock.calls.at(-1)?.[1];
      // Node turns a delay past 2^31 - 1 ms into 1 ms (TimeoutOverflowWarning).
      expect(delay).toBeLessThanOrEqual(2 ** 31 - 1);
      expect(delay).toBe(MAX_SWEEP_MS);
    } finally {
      setIntervalSpy.mockRestore();
      await s.close();
    }
  });

  it('sweeps once a window for a window shorter than an hour', async () => {
    const setIntervalSpy = vi.spyOn(globalThis, 'setInterval');
    const s = new MemoryRateLimitStore({ limit: 10, windowSeconds: 60 });
    try {
      expect(setIntervalSpy.mock.calls.at(-1)?.[1]).toBe(60_000);
    } finally {
      setIntervalSpy.mockRestore();
      await s.close();
    }
  });
});
