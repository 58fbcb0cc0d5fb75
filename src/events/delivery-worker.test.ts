import { describe, expect, it } from 'vitest';
import type { Database } from '../db/pool.js';
import { SecretBox } from '../secrets/secret-box.js';
import { DEFAULT_DELIVERY_POLICY, DeliveryWorker } from './delivery-worker.js';

/** A database whose claim answers "nothing due" when the test lets it. */
function slowEmptyDatabase() {
  const pending: Array<() => void> = [];
  const db = {
    system: () => new Promise<unknown[]>((resolve) => pending.push(() => resolve([]))),
  } as unknown as Database;
  const answer = () => {
    for (const resolve of pending.splice(0)) resolve();
  };
  return { db, answer, waiting: () => pending.length };
}

describe('DeliveryWorker.stop', () => {
  it('resolves when a wake arrived while the last claim was running', async () => {
    const { db, answer, waiting } = slowEmptyDatabase();
    const worker = new DeliveryWorker(db, new SecretBox([]), { ...DEFAULT_DELIVERY_POLICY, pollMs: 60_000 });
    worker.start();
    expect(waiting()).toBe(1);
    // The wake lands during the claim: the worker notes it must look again.
    worker.wake();
    const stopped = worker.stop();
    answer();
    let done = false;
    void stopped.then(() => {
      done = true;
    });
    await expect.poll(() => done).toBe(true);
    expect(waiting()).toBe(0);
  });

  it('resolves at once when nothing is claimed or in flight', async () => {
    const { db, answer } = slowEmptyDatabase();
    const worker = new DeliveryWorker(db, new SecretBox([]), { ...DEFAULT_DELIVERY_POLICY, pollMs: 60_000 });
    worker.start();
    answer();
    await worker.stop();
  });
});
