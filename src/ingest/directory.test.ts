import { afterEach, describe, expect, it, vi } from 'vitest';
import { ReaderDirectory } from './directory.js';
import type { ReaderTopic } from './readers-repository.js';

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const reader: ReaderTopic = {
  id: 7,
  orgId: 1,
  family: 'generic-json',
  topic: 'site/gate',
  mqttPasswordHash: null,
};

/** A directory over a source that counts its loads and serves `rows()` at each. */
function counted(rows: () => ReaderTopic[]) {
  const loads = { count: 0 };
  const directory = new ReaderDirectory({
    source: async () => {
      loads.count += 1;
      return rows();
    },
    pollMs: 3_600_000,
    missReloadMs: 1_000,
    logger: quiet,
  });
  return { directory, loads };
}

describe('reloads asked for by logins the directory does not know', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('see a reader created before the login', async () => {
    let live: ReaderTopic[] = [];
    const { directory } = counted(() => live);
    await directory.start();
    live = [reader];
    await directory.refreshForMiss();
    expect(directory.login(7)?.topic).toBe('site/gate');
    await directory.stop();
  });

  it('begin at most once a second, however many logins miss, each after the logins it serves', async () => {
    vi.useFakeTimers();
    let live: ReaderTopic[] = [];
    const { directory, loads } = counted(() => live);
    await directory.start();
    expect(loads.count).toBe(1);

    const first = Array.from({ length: 50 }, () => directory.refreshForMiss());
    await vi.advanceTimersByTimeAsync(0);
    await Promise.all(first);
    expect(loads.count).toBe(2);

    // A reader created now, and a stream of logins missing within the second: one load
    // for all of them, not before the second is up, and it sees the reader.
    live = [reader];
    let settled = 0;
    const second = Array.from({ length: 50 }, () => directory.refreshForMiss().then(() => (settled += 1)));
    await vi.advanceTimersByTimeAsync(990);
    expect(loads.count).toBe(2);
    expect(settled).toBe(0);
    await vi.advanceTimersByTimeAsync(10);
    await Promise.all(second);
    expect(loads.count).toBe(3);
    expect(settled).toBe(50);
    expect(directory.login(7)?.topic).toBe('site/gate');
    await directory.stop();
  });

  it('end without a load once the directory is stopped', async () => {
    vi.useFakeTimers();
    const { directory, loads } = counted(() => []);
    await directory.start();
    await directory.refreshForMiss();
    const waiting = directory.refreshForMiss();
    await directory.stop();
    await vi.advanceTimersByTimeAsync(1_000);
    await waiting;
    expect(loads.count).toBe(2);
  });
});
