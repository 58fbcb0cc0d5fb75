import { describe, expect, it } from 'vitest';
import { settleAll } from './settle-all.js';

describe('settleAll', () => {
  it('settles every item though one throws, then throws the first error', () => {
    const settled: number[] = [];
    const first = new Error('first');
    expect(() =>
      settleAll([1, 2, 3, 4], (n) => {
        settled.push(n);
        if (n === 2) throw first;
        if (n === 3) throw new Error('second');
      }),
    ).toThrow(first);
    expect(settled).toEqual([1, 2, 3, 4]);
  });
});
