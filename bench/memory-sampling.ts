/**
 * bench:ingest's memory figures over a measured window: the peak resident set, and with
 * `node --expose-gc` the peak of live memory after a full collection.
 */

export interface MemoryFigures {
  rssAtStart: number;
  peakRss: number;
  /** Null without --expose-gc. */
  liveRise: number | null;
}

/** Live memory after a full collection (V8 heap and buffers), or null without --expose-gc. */
function liveBytes(): number | null {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return null;
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

export function startMemorySampling(): { stop(): MemoryFigures } {
  const rssAtStart = process.memoryUsage.rss();
  let peakRss = rssAtStart;
  // Every 100 ms: at every 20 ms the samples took 0.8 µs of the service's CPU per read of
  // a 4 x 100 moving run (--cpu-prof), reading /proc while the collector maps and unmaps.
  // A backlog's memory grows over seconds, so the peak is still seen.
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 100);
  const liveAtStart = liveBytes();
  let peakLive = liveAtStart;
  // Only when asked for (--expose-gc). A full collection of a heap holding the whole
  // backlog takes a while, more on a loaded machine: the next sample waits at least 20
  // times as long as the last one took, so the sampling never takes over the process.
  let liveSampler: NodeJS.Timeout | undefined;
  const sampleLive = (delayMs: number) => {
    liveSampler = setTimeout(() => {
      const t0 = performance.now();
      const live = liveBytes();
      if (live !== null && peakLive !== null) peakLive = Math.max(peakLive, live);
      sampleLive(Math.max(1000, 20 * (performance.now() - t0)));
    }, delayMs);
  };
  if (liveAtStart !== null) sampleLive(1000);
  return {
    stop() {
      clearInterval(sampler);
      clearTimeout(liveSampler);
      peakRss = Math.max(peakRss, process.memoryUsage.rss());
      return {
        rssAtStart,
        peakRss,
        liveRise: peakLive === null || liveAtStart === null ? null : peakLive - liveAtStart,
      };
    },
  };
}
