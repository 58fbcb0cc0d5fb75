import { describe, expect, it } from 'vitest';
import { KeyedLimiter } from './keyed-limiter.js';

function deferred() {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('KeyedLimiter', () => {
  it('runs at most `limit` tasks of a key at once, the rest in arrival order', async () => {
    const limiter = new KeyedLimiter<number>(2);
    const gates = Array.from({ length: 5 }, deferred);
    const started: number[] = [];
    const done = gates.map((g, i) =>
      limiter.run(1, async () => {
        started.push(i);
        await g.promise;
        return i;
      }),
    );
    await tick();
    expect(started).toEqual([0, 1]);
    expect(limiter.load(1)).toEqual({ running: 2, waiting: 3 });

    gates[1]!.resolve();
    await tick();
    expect(started).toEqual([0, 1, 2]);
    gates[0]!.resolve();
    await tick();
    expect(started).toEqual([0, 1, 2, 3]);
    for (const g of gates) g.resolve();
    expect(await Promise.all(done)).toEqual([0, 1, 2, 3, 4]);
    expect(limiter.load(1)).toEqual({ running: 0, waiting: 0 });
  });

  it('a failing task gives its place to the next one and its error to its caller', async () => {
    const limiter = new KeyedLimiter<string>(1);
    const first = deferred();
    const failing = limiter.run('a', () => first.promise);
    const next = limiter.run('a', async () => 'next');
    first.reject(new Error('boom'));
    await expect(failing).rejects.toThrow('boom');
    expect(await next).toBe('next');
    expect(limiter.load('a')).toEqual({ running: 0, waiting: 0 });
  });

  it('keys do not wait for each other', async () => {
    const limiter = new KeyedLimiter<number>(1);
    const blocked = deferred();
    const one = limiter.run(1, () => blocked.promise);
    expect(await limiter.run(2, async () => 'other key')).toBe('other key');
    expect(limiter.load(1)).toEqual({ running: 1, waiting: 0 });
    blocked.resolve();
    await one;
  });

  it('refuses a limit below one', () => {
    expect(() => new KeyedLimiter(0)).toThrow(/invalid limit/);
  });
});
