import { describe, expect, it } from 'vitest';
import { settleAll, settleInTurns } from './settle-all.js';

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

describe('settleInTurns', () => {
  const items = (n: number) => Array.from({ length: n }, (_, i) => i);

  it('settles every item once, in order, with its index, a turn of the event loop between each few', async () => {
    const settled: Array<[number, number]> = [];
    const seenByOtherWork: number[] = [];
    // Other work waiting for the event loop (an API request, say) runs between the turns.
    const other = () => {
      seenByOtherWork.push(settled.length);
      if (settled.length < 1000) setImmediate(other);
    };
    setImmediate(other);
    await settleInTurns(items(1000), (n, i) => settled.push([n, i]), 256);
    expect(settled).toEqual(items(1000).map((n) => [n, n]));
    // Between the four turns of 256, 256, 256 and 232 items.
    expect(seenByOtherWork).toEqual([256, 512, 768]);
  });

  it('settles a batch within one turn at once', async () => {
    const settled: number[] = [];
    const done = settleInTurns(items(256), (n) => settled.push(n), 256);
    expect(settled).toHaveLength(256);
    await done;
    await settleInTurns([], () => {
      throw new Error('nothing to settle');
    });
  });

  it('settles every item though some throw, in any turn, then rejects with the first error', async () => {
    const settled: number[] = [];
    const first = new Error('first');
    await expect(
      settleInTurns(
        items(10),
        (n) => {
          settled.push(n);
          if (n === 1) throw first;
          if (n === 7) throw new Error('second');
        },
        3,
      ),
    ).rejects.toBe(first);
    expect(settled).toEqual(items(10));
  });
});
