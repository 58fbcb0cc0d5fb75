import { describe, expect, it } from 'vitest';
import { counted, LogThrottle } from './log-throttle.js';

describe('LogThrottle', () => {
  it('lets a key through once per interval and counts what it left out into the next line', () => {
    const throttle = new LogThrottle(1_000);
    const logged: Array<[string, number]> = [];
    const log = (key: string, now: number) => throttle.maybe(key, (n) => logged.push([key, n]), now);
    log('a', 0);
    log('a', 10);
    log('b', 20);
    log('a', 999);
    log('a', 1_000);
    log('a', 1_500);
    expect(logged).toEqual([
      ['a', 0],
      ['b', 0],
      ['a', 2],
    ]);
  });

  it('adds the count as a field only when something was left out', () => {
    expect(counted(0)).toEqual({});
    expect(counted(3)).toEqual({ suppressed: 3 });
  });
});
