/**
 * What placing late reads in memory costs (src/tracking/late-reads.ts planLateReads), per
 * read, for ranges of stored stays from a few to LATE_RANGE_STAYS (1,000). The ingest bench's
 * moving population sends about three reads in four down this path with ranges of about five
 * stays; a reader that delivers a day of buffered reads late meets the long ranges.
 *
 *   npm run bench:late-reads
 */
import { planLateReads, type StayRange } from '../src/tracking/late-reads.js';
import type { Sighting } from '../src/tracking/sightings.js';
import { benchArgs } from './cli-args.js';

/** `stays` stored stays (two locations taking turns, 10 s each) and `reads` late reads at a third, spread over them. */
function lateBatch(stays: number, reads: number): { range: StayRange; reads: Sighting[] } {
  return {
    range: {
      stays: Array.from({ length: stays }, (_, i) => ({
        id: i + 1,
        locationId: (i % 2) + 1,
        startedAt: i * 10_000,
        lastSeenAt: i * 10_000 + 5_000,
      })),
      completeBefore: true,
      completeAfter: true,
    },
    reads: Array.from({ length: reads }, (_, j) => ({
      assetId: 1,
      locationId: 3,
      at: Math.floor(((j + 0.5) * stays * 10_000) / reads) + 7_000,
    })),
  };
}

benchArgs('usage: npm run bench:late-reads   (no options)', { options: {} });

console.log('stays in range  late reads  µs per asset  µs per read');
for (const [stays, reads] of [
  [5, 5],
  [50, 10],
  [1000, 50],
  [1000, 500],
] as const) {
  const batch = lateBatch(stays, reads);
  const runs = Math.max(50, Math.floor(2_000_000 / (stays * reads)));
  for (let i = 0; i < 10; i++) planLateReads(batch.range, batch.reads);
  const started = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) planLateReads(batch.range, batch.reads);
  const us = Number(process.hrtime.bigint() - started) / 1000 / runs;
  console.log(
    `${String(stays).padStart(14)}  ${String(reads).padStart(10)}  ${us.toFixed(1).padStart(12)}  ${(us / reads).toFixed(2).padStart(11)}`,
  );
}
