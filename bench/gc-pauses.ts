import { type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';

/**
 * The time the collector paused this process's main thread over a measured window, from
 * Node's `gc` performance entries (scavenges, mark-compacts and their incremental steps as
 * V8 reports them; the work of its helper threads is not a pause and is not counted). What
 * a run allocates and keeps alive shows here more steadily than in reads per second, which
 * follow the other work on the machine.
 */
export interface GcPauses {
  /** Stops observing; the pauses' total, in milliseconds, and how many there were. */
  stop(): { ms: number; count: number };
}

export function observeGcPauses(): GcPauses {
  let ms = 0;
  let count = 0;
  const add = (entries: readonly PerformanceEntry[]) => {
    for (const e of entries) {
      ms += e.duration;
      count++;
    }
  };
  const observer = new PerformanceObserver((list) => add(list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  return {
    stop() {
      // Entries are delivered after the fact: those not delivered yet are taken here.
      add(observer.takeRecords());
      observer.disconnect();
      return { ms, count };
    },
  };
}
