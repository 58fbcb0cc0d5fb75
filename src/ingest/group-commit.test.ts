import { describe, expect, it } from 'vitest';
import { type BatchReport, GroupCommit } from './group-commit.js';
import { Limiter } from './limiter.js';

/** A store that records each transaction's items and finishes it when told to. */
function gatedStore(fail: (items: string[]) => Error | undefined = () => undefined) {
  const transactions: string[][] = [];
  const gates: Array<() => void> = [];
  return {
    transactions,
    open: () => {
      for (const g of gates.splice(0)) g();
    },
    async store(_orgId: number, items: string[]): Promise<string[]> {
      transactions.push(items);
      await new Promise<void>((resolve) => gates.push(resolve));
      const err = fail(items);
      if (err) throw err;
      return items.map((i) => `stored ${i}`);
    },
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('GroupCommit', () => {
  it('stores what arrives while a transaction runs together in the next one, each settling after its own', async () => {
    const store = gatedStore();
    const reports: BatchReport[] = [];
    const reported: string[][] = [];
    const gc = new GroupCommit<string, string>({
      store: store.store,
      maxTransactions: 1,
      onBatch: (r, items) => {
        reports.push(r);
        reported.push([...items]);
      },
    });
    const first = gc.submit(1, 'a');
    const rest = ['b', 'c', 'd'].map((x) => gc.submit(1, x));
    let restDone = false;
    void Promise.all(rest).then(() => {
      restDone = true;
    });
    await tick();
    expect(store.transactions).toEqual([['a']]);
    store.open();
    expect(await first).toBe('stored a');
    await tick();
    // The three waited for the first transaction and went in one; none settled before it committed.
    expect(store.transactions).toEqual([['a'], ['b', 'c', 'd']]);
    expect(restDone).toBe(false);
    store.open();
    expect(await Promise.all(rest)).toEqual(['stored b', 'stored c', 'stored d']);
    expect(reports.map((r) => [r.items, r.committed])).toEqual([
      [1, true],
      [3, true],
    ]);
    // Each report comes with the items of its transaction.
    expect(reported).toEqual([['a'], ['b', 'c', 'd']]);
    await gc.idle();
  });

  it('by default takes 5,000 light items into one transaction, so one-read messages group as larger ones do', async () => {
    const store = gatedStore();
    const gc = new GroupCommit<string, string>({ store: store.store, maxTransactions: 1 });
    const all = [gc.submit(1, 'first'), ...Array.from({ length: 6_000 }, (_, i) => gc.submit(1, `m${i}`))];
    // A committed batch settles in turns of the event loop (settleInTurns) before the next starts.
    for (let i = 0; i < 200 && store.transactions.length < 3; i++) {
      await tick();
      store.open();
      await tick();
    }
    store.open();
    await Promise.all(all);
    expect(store.transactions.map((t) => t.length)).toEqual([1, 5_000, 1_000]);
  });

  it('settles a committed batch in turns of the event loop, then starts the next with what they let in', async () => {
    const store = gatedStore();
    const gc = new GroupCommit<string, string>({ store: store.store, maxTransactions: 1 });
    const block = gc.submit(1, 'block');
    let settled = 0;
    let seenMidway: number | undefined;
    let followUp: Promise<string> | undefined;
    const batch = Array.from({ length: 600 }, (_, i) =>
      gc.submit(1, `m${i}`).then((outcome) => {
        if (settled++ === 0) {
          // Other work waiting for the event loop, and an item its settling let in.
          setImmediate(() => {
            seenMidway = settled;
          });
          followUp = gc.submit(1, 'follow-up');
        }
        return outcome;
      }),
    );
    await tick();
    store.open();
    await block;
    await tick();
    expect(store.transactions.map((t) => t.length)).toEqual([1, 600]);
    store.open();
    expect(await Promise.all(batch)).toEqual(Array.from({ length: 600 }, (_, i) => `stored m${i}`));
    expect(seenMidway).toBeGreaterThan(0);
    expect(seenMidway).toBeLessThan(600);
    await tick();
    expect(store.transactions.map((t) => t.length)).toEqual([1, 600, 1]);
    store.open();
    expect(await followUp).toBe('stored follow-up');
    await gc.idle();
  });

  it('keeps a batch to one organization and within its item and weight limits', async () => {
    const store = gatedStore();
    const gc = new GroupCommit<string, string>({
      store: store.store,
      maxTransactions: 1,
      maxItems: 3,
      maxWeight: 10,
      weight: (item) => Number(item.split(':')[1]),
    });
    const all = [
      gc.submit(1, 'first:1'),
      gc.submit(1, 'a:4'),
      gc.submit(2, 'other-org:1'),
      gc.submit(1, 'b:4'),
      gc.submit(1, 'c:4'),
      gc.submit(1, 'd:1'),
      gc.submit(1, 'e:1'),
      gc.submit(1, 'huge:50'),
    ];
    for (let i = 0; i < 8 && store.transactions.length < 6; i++) {
      await tick();
      store.open();
      await tick();
    }
    await Promise.all(all);
    expect(store.transactions).toEqual([
      ['first:1'],
      // weight 4 + 4 = 8; c would make 12, and d waits behind c
      ['a:4', 'b:4'],
      ['other-org:1'],
      // three items at most
      ['c:4', 'd:1', 'e:1'],
      // heavier than the limit: alone
      ['huge:50'],
    ]);
  });

  it('retries a failed batch in halves, so only the bad item fails', async () => {
    const store = gatedStore((items) => (items.includes('bad') ? new Error('invalid input') : undefined));
    const gc = new GroupCommit<string, string>({ store: store.store, maxTransactions: 1 });
    const block = gc.submit(1, 'block');
    const items = ['a', 'b', 'bad', 'c', 'd'];
    const results = items.map((i) =>
      gc.submit(1, i).then(
        (v) => v,
        (err: Error) => `failed: ${err.message}`,
      ),
    );
    const opener = setInterval(store.open, 1);
    try {
      await block;
      expect(await Promise.all(results)).toEqual([
        'stored a',
        'stored b',
        'failed: invalid input',
        'stored c',
        'stored d',
      ]);
    } finally {
      clearInterval(opener);
    }
    // Every good item committed exactly once.
    const committed = store.transactions.filter((t) => !t.includes('bad')).flat();
    expect(committed.sort()).toEqual(['a', 'b', 'block', 'c', 'd']);
  });

  it('fails the whole batch at once when the database is unavailable', async () => {
    const outage = new Error('connection terminated');
    const store = gatedStore(() => outage);
    const gc = new GroupCommit<string, string>({
      store: store.store,
      maxTransactions: 1,
      isUnavailable: (err) => err === outage,
    });
    const block = gc.submit(1, 'block').catch((err: Error) => err);
    const results = ['a', 'b', 'c'].map((i) => gc.submit(1, i).catch((err: Error) => err));
    const opener = setInterval(store.open, 1);
    try {
      expect(await block).toBe(outage);
      expect(await Promise.all(results)).toEqual([outage, outage, outage]);
    } finally {
      clearInterval(opener);
    }
    // No splitting: one transaction for the blocker, one for the three.
    expect(store.transactions).toEqual([['block'], ['a', 'b', 'c']]);
  });

  it('runs at most maxTransactions at once, one per organization', async () => {
    const store = gatedStore();
    const gc = new GroupCommit<string, string>({ store: store.store, maxTransactions: 2, maxItems: 1 });
    const all = [gc.submit(1, 'a'), gc.submit(1, 'b'), gc.submit(2, 'c'), gc.submit(3, 'd')];
    await tick();
    // Organization 1's second batch waits for its first, though a slot is free for it.
    expect(store.transactions).toEqual([['a'], ['c']]);
    store.open();
    await tick();
    await tick();
    expect(store.transactions.slice(2).sort()).toEqual([['b'], ['d']]);
    const opener = setInterval(store.open, 1);
    try {
      await Promise.all(all);
    } finally {
      clearInterval(opener);
    }
    expect(store.transactions).toHaveLength(4);
  });
});

describe('GroupCommit lanes', () => {
  it('runs the lanes of one organization side by side, each lane in order', async () => {
    const store = gatedStore();
    const gc = new GroupCommit<string, string>({
      store: store.store,
      maxTransactions: 4,
      lane: (item) => Number(item.split(':')[0]),
    });
    const all = ['0:a', '1:b', '0:c', '1:d', '0:e'].map((i) => gc.submit(1, i));
    await tick();
    expect(store.transactions).toEqual([['0:a'], ['1:b']]);
    store.open();
    await Promise.all(all.slice(0, 2));
    await tick();
    expect(store.transactions.slice(2)).toEqual([['0:c', '0:e'], ['1:d']]);
    store.open();
    await Promise.all(all);
  });

  it('stores an item across idle lanes in one transaction that holds them, whose later items wait for it', async () => {
    const store = gatedStore();
    const gc = new GroupCommit<string, string>({
      store: store.store,
      maxTransactions: 4,
      lane: (item) => Number(item.split(':')[0]),
    });
    const outcome = (settled: string[]) => ({
      resolve: (o: string) => settled.push(o),
      reject: () => undefined,
    });
    const settled: string[] = [];
    expect(gc.tryAcross(1, [0, 1], 'wide', outcome(settled))).toBe(true);
    const later = [gc.submit(1, '0:a'), gc.submit(1, '2:b'), gc.submit(2, '0:other-org')];
    await tick();
    // Lane 2 and the other organization's lane 0 are free; lanes 0 and 1 wait for the wide item.
    expect(store.transactions).toEqual([['wide'], ['2:b'], ['0:other-org']]);
    expect(gc.tryAcross(1, [2, 3], 'busy lane', outcome(settled))).toBe(false);
    store.open();
    await tick();
    expect(settled).toEqual(['stored wide']);
    expect(store.transactions.slice(3)).toEqual([['0:a']]);
    store.open();
    expect(await Promise.all(later)).toEqual(['stored 0:a', 'stored 2:b', 'stored 0:other-org']);
    await gc.idle();
  });

  it('refuses to go across lanes with items waiting in one, or with every transaction taken', async () => {
    const store = gatedStore();
    const gc = new GroupCommit<string, string>({
      store: store.store,
      maxTransactions: 2,
      lane: (item) => Number(item.split(':')[0]),
    });
    const never = { resolve: () => expect.fail('not stored'), reject: () => expect.fail('not stored') };
    expect(gc.quiet).toBe(true);
    const first = [gc.submit(1, '0:a'), gc.submit(1, '0:b')];
    await tick();
    expect(gc.quiet).toBe(false);
    // Lane 0 runs '0:a' with '0:b' waiting: a wide item there would overtake '0:b'.
    expect(gc.tryAcross(1, [0, 1], 'wide', never)).toBe(false);
    const other = gc.submit(2, '0:c');
    await tick();
    expect(gc.tryAcross(3, [0, 1], 'wide', never)).toBe(false);
    store.open();
    await tick();
    store.open();
    await Promise.all([...first, other]);
    await gc.idle();
    expect(store.transactions).toEqual([['0:a'], ['0:c'], ['0:b']]);
  });
});

describe('Limiter with a weight budget', () => {
  it('holds back what would pass the budget, in arrival order, and lets an oversized item through alone', async () => {
    const limiter = new Limiter(10, 100);
    const order: string[] = [];
    await limiter.acquire(60);
    const b = limiter.acquire(50).then(() => order.push('b'));
    const c = limiter.acquire(10).then(() => order.push('c'));
    await tick();
    // c would fit, but b came first.
    expect(order).toEqual([]);
    expect(limiter.inFlightWeight).toBe(60);
    limiter.release(60);
    await Promise.all([b, c]);
    expect(order).toEqual(['b', 'c']);
    expect(limiter.inFlightWeight).toBe(60);
    limiter.release(50);
    limiter.release(10);
    await limiter.idle();
    await limiter.acquire(500);
    expect(limiter.inFlightWeight).toBe(500);
    const next = limiter.acquire(1).then(() => order.push('after oversized'));
    await tick();
    expect(order).toEqual(['b', 'c']);
    limiter.release(500);
    await next;
    expect(order.at(-1)).toBe('after oversized');
  });

  it('bounds the count as before', async () => {
    const limiter = new Limiter(2);
    await limiter.acquire();
    await limiter.acquire();
    let third = false;
    const p = limiter.acquire().then(() => {
      third = true;
    });
    await tick();
    expect(third).toBe(false);
    limiter.release();
    await p;
    expect(limiter.inFlight).toBe(2);
  });

  it('takes a free slot at once with tryAcquire, never ahead of a waiter', async () => {
    const limiter = new Limiter(2, 100);
    expect(limiter.tryAcquire(60)).toBe(true);
    expect(limiter.tryAcquire(50)).toBe(false);
    const waiting = limiter.acquire(50);
    // 10 would fit, but one waits already.
    expect(limiter.tryAcquire(10)).toBe(false);
    limiter.release(60);
    await waiting;
    expect(limiter.tryAcquire(10)).toBe(true);
    expect(limiter.tryAcquire(0)).toBe(false);
    expect([limiter.inFlight, limiter.inFlightWeight]).toEqual([2, 60]);
  });
});

describe('long queues (thousands of one-read messages waiting)', () => {
  it('GroupCommit starts the free lane whose oldest item came first, and keeps each lane in order', async () => {
    const store = gatedStore();
    const gc = new GroupCommit<string, string>({
      store: store.store,
      maxTransactions: 1,
      maxItems: 7,
      lane: (item) => Number(item.split(':')[0]),
    });
    const all = [gc.submit(1, '0:block'), gc.submit(1, '2:x'), gc.submit(1, '1:y')];
    for (let i = 0; i < 3000; i++) all.push(gc.submit(1, `0:${i}`));
    await tick();
    store.open();
    await tick();
    // Lane 2's item came before lane 1's: it goes first once the slot is free.
    expect(store.transactions.slice(1, 2)).toEqual([['2:x']]);
    const opener = setInterval(store.open, 0);
    try {
      await Promise.all(all);
    } finally {
      clearInterval(opener);
    }
    const lane0 = store.transactions.flat().filter((i) => i.startsWith('0:') && i !== '0:block');
    expect(lane0).toEqual(Array.from({ length: 3000 }, (_, i) => `0:${i}`));
    expect(store.transactions.every((t) => t.length <= 7)).toBe(true);
    expect(gc.queued).toBe(0);
    await gc.idle();
  });

  it('Limiter serves thousands of waiters in arrival order', async () => {
    const limiter = new Limiter(3);
    const order: number[] = [];
    const held = await Promise.all([limiter.acquire(), limiter.acquire(), limiter.acquire()]);
    expect(held).toHaveLength(3);
    const waiters = Array.from({ length: 5000 }, (_, i) =>
      limiter.acquire().then(() => {
        order.push(i);
        limiter.release();
      }),
    );
    for (let i = 0; i < 3; i++) limiter.release();
    await Promise.all(waiters);
    expect(order).toEqual(Array.from({ length: 5000 }, (_, i) => i));
    await limiter.idle();
    expect(limiter.inFlight).toBe(0);
  });
});
