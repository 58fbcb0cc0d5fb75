import { afterEach, describe, expect, it, vi } from 'vitest';
import { publishAtRate, summarizeLatencies } from '../../bench/paced-publish.js';

// bench:ingest --rate: messages leave on their schedule, not all at once, and each latency
// is counted from the message's due time, so a publisher running late shows in it.
describe('bench publishAtRate', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends each message when it is due, in order, and times it from then', async () => {
    vi.useFakeTimers();
    const sentAt: Array<[number, number]> = [];
    const acks: Array<() => void> = [];
    const done = publishAtRate(
      [0, 1, 2, 3, 4],
      1000,
      (m) => {
        sentAt.push([m, Date.now()]);
        return new Promise<void>((resolve) => acks.push(resolve));
      },
      Date.now,
    );
    const start = Date.now();
    // One a millisecond: the first at once, the others on the ticks after they fall due.
    expect(sentAt.map(([m]) => m)).toEqual([0]);
    await vi.advanceTimersByTimeAsync(2);
    expect(sentAt.map(([m]) => m)).toEqual([0, 1, 2]);
    await vi.advanceTimersByTimeAsync(2);
    expect(sentAt.map(([m]) => m)).toEqual([0, 1, 2, 3, 4]);
    for (const [m, at] of sentAt) expect(at - start).toBeGreaterThanOrEqual(m);
    // Acknowledged 10 ms after the start: each waited 10 ms less its due offset.
    await vi.advanceTimersByTimeAsync(6);
    for (const ack of acks) ack();
    expect(await done).toEqual([10, 9, 8, 7, 6]);
  });

  it('counts from the due time when the publisher falls behind', async () => {
    let clock = 0;
    const latencies = await publishAtRate(
      [0, 1, 2],
      100,
      async () => {
        // Every publish takes the publisher 50 ms: the later messages leave late.
        clock += 50;
      },
      () => clock,
    );
    // The first, due at 0, is acknowledged at 50 ms; the tick after it finds the other two
    // (due at 10 and 20 ms) overdue, sends both and they are acknowledged at 150 ms.
    expect(latencies).toEqual([50, 140, 130]);
  });

  it('rejects with the first failed publish', async () => {
    await expect(
      publishAtRate([1, 2], 10_000, async (m) => {
        if (m === 2) throw new Error('dropped');
      }),
    ).rejects.toThrow('dropped');
  });

  it('resolves at once with nothing to send, and refuses a rate that is not positive', async () => {
    await expect(publishAtRate([], 10, async () => undefined)).resolves.toEqual([]);
    expect(() => publishAtRate([1], 0, async () => undefined)).toThrow(/positive/);
  });

  it('summarizes latencies as median, 99th percentile, largest, and the trend through the run', () => {
    // A queue growing through the run: each message waits 1 ms longer than the one before.
    const growing = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(summarizeLatencies(growing)).toEqual({
      p50: 50,
      p99: 99,
      max: 100,
      firstTenthP50: 5,
      lastTenthP50: 95,
    });
    // Kept up with: the same wait at the start and at the end, whatever the outliers between.
    const steady = Array.from({ length: 100 }, (_, i) => (i === 50 ? 900 : 20));
    expect(summarizeLatencies(steady)).toMatchObject({
      p50: 20,
      max: 900,
      firstTenthP50: 20,
      lastTenthP50: 20,
    });
    const one = { p50: 2.5, p99: 2.5, max: 2.5, firstTenthP50: 2.5, lastTenthP50: 2.5 };
    expect(summarizeLatencies([2.46])).toEqual(one);
    expect(summarizeLatencies([])).toEqual({ p50: 0, p99: 0, max: 0, firstTenthP50: 0, lastTenthP50: 0 });
  });
});
