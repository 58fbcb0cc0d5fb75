/**
 * At most `limit` tasks at a time per key; the others wait in arrival order, holding
 * nothing. For work that the database serialises per key anyway (an organization's keyless
 * creates queue on its keyspace lock): past a few in flight, more only hold pooled
 * connections while they wait, which the organization's other requests then wait for.
 */
export class KeyedLimiter<K> {
  private readonly lanes = new Map<K, { running: number; waiting: (() => void)[] }>();

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`invalid limit ${limit}`);
  }

  async run<T>(key: K, task: () => Promise<T>): Promise<T> {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { running: 0, waiting: [] };
      this.lanes.set(key, lane);
    }
    if (lane.running < this.limit) lane.running++;
    else {
      const queue = lane.waiting;
      // The finishing task hands its place over: `running` already counts this one.
      await new Promise<void>((resolve) => queue.push(resolve));
    }
    try {
      return await task();
    } finally {
      const next = lane.waiting.shift();
      if (next) next();
      else if (--lane.running === 0) this.lanes.delete(key);
    }
  }

  /** Tasks running and waiting for `key` (for tests). */
  load(key: K): { running: number; waiting: number } {
    const lane = this.lanes.get(key);
    return { running: lane?.running ?? 0, waiting: lane?.waiting.length ?? 0 };
  }
}
