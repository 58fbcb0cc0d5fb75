import type pg from 'pg';

/**
 * How long a waiting read keeps its place against writes that arrive after it. Under the
 * mixed load of docs/performance.md reads waited well under this; it bounds what a flood
 * of writes (an integration syncing at full concurrency) can add to a read's wait.
 */
export const READ_PLACE_KEPT_MS = 100;

/** pg-pool's waiters: the PendingItems of its `_pendingQueue`, in the order they are served. */
type PendingQueue = object[];

const writes = new WeakSet<object>();
const readsSince = new WeakMap<object, number>();

function pendingQueue(pool: pg.Pool): PendingQueue | undefined {
  const queue = (pool as unknown as { _pendingQueue?: unknown })._pendingQueue;
  return Array.isArray(queue) ? queue : undefined;
}

/**
 * A connection from `pool` by `connect`, served ahead of waiting reads when `write`. With
 * every connection busy, a write waited behind every read queued before it, and on the
 * mixed load (40% lists) most of a PATCH's 70 ms was that wait for a connection it then
 * held for a few milliseconds (docs/performance-history.md, "Writes first"). A write now goes
 * behind the writes already waiting and the reads that have waited READ_PLACE_KEPT_MS or
 * longer, ahead of the others.
 *
 * pg-pool serves its waiters from `_pendingQueue`, to which `connect` appends synchronously
 * when it has no idle connection; the waiter is moved there. Its connection timeout finds
 * a waiter by identity, so it is kept. Should the pool not have that queue (another
 * pg-pool), waiters are served in order, as before.
 */
export function connectInTurn(
  pool: pg.Pool,
  connect: () => Promise<pg.PoolClient>,
  write: boolean,
): Promise<pg.PoolClient> {
  const queue = pendingQueue(pool);
  const before = queue?.length ?? 0;
  const connecting = connect();
  // A connection was at hand: nothing waits, nothing to order (the common case).
  if (!queue || queue.length !== before + 1) return connecting;
  const now = performance.now();
  const waiter = queue[queue.length - 1]!;
  if (!write) {
    readsSince.set(waiter, now);
    return connecting;
  }
  writes.add(waiter);
  let at = 0;
  while (at < queue.length - 1) {
    const ahead = queue[at]!;
    const since = readsSince.get(ahead);
    if (!writes.has(ahead) && (since === undefined || now - since < READ_PLACE_KEPT_MS)) break;
    at++;
  }
  if (at < queue.length - 1) {
    queue.pop();
    queue.splice(at, 0, waiter);
  }
  return connecting;
}
