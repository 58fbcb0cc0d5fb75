/**
 * Allocation sampling over a measured window, for BENCH_HEAP_PROFILE=<dir>: V8's sampling
 * heap profiler with the objects the collector already took kept in the sample, so the
 * profile shows what was allocated (the collector's work) rather than what is still live.
 * Read the file with `node bench/heap-summary.mjs <file> --per <reads>`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

export interface HeapSampling {
  /** Stops sampling and writes `<dir>/<name>.heapprofile`; returns its path. */
  stop(name: string): Promise<string>;
}

export async function startHeapSampling(dir: string): Promise<HeapSampling> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return {
    async stop(name) {
      const { profile } = await session.post('HeapProfiler.stopSampling');
      await session.post('HeapProfiler.disable');
      session.disconnect();
      await mkdir(dir, { recursive: true });
      const file = join(dir, `${name}.heapprofile`);
      await writeFile(file, JSON.stringify(profile));
      return file;
    },
  };
}
