/**
 * The messages bench:ingest publishes, and the same reads as rows for its ceiling
 * (bench/ingest-ceiling.ts): round k reads every asset once, at its location for that
 * round; a message carries `batch` reads of one reader, with reader times.
 */
import { epc } from './harness.js';
import type { CeilingMessage, CeilingRead } from './ingest-ceiling.js';
import type { BenchMessage } from './ingest-publishers.js';
import type { Population } from './ingest-results.js';

export interface MessagePlan {
  population: Population;
  reads: number;
  assets: number;
  /**
   * The number of the first asset read (0): a warm-up reads other assets than the measured
   * run, by numbers from `--assets` on.
   */
  firstAsset?: number;
  /** Reads per message. */
  batch: number;
  antennas: number;
  /** Reader times start here (epoch ms), a second per round. */
  base: number;
  /** Database ids: of asset n (by its number in the seed), of each location, of each reader. */
  assetIds: Map<number, number>;
  locationIds: number[];
  readerIds: number[];
}

/** Location (0..locations-1) of asset `a` at its read number `k`. */
const where = (population: Population, locations: number, a: number, k: number) =>
  population === 'stationary' ? a % locations : (a + k) % locations;

export function benchMessages(plan: MessagePlan): { messages: BenchMessage[]; ceiling: CeilingMessage[] } {
  const readers = plan.readerIds.length;
  const locations = readers * plan.antennas;
  const rounds = plan.reads / plan.assets;
  const first = plan.firstAsset ?? 0;
  const messages: BenchMessage[] = [];
  const ceiling: CeilingMessage[] = [];
  const pendingReads: CeilingRead[][] = Array.from({ length: readers }, () => []);
  const pending: Array<Array<{ tag: string; antenna: number; time: string }>> = Array.from(
    { length: readers },
    () => [],
  );
  const flush = (r: number) => {
    const payload = JSON.stringify({ reads: pending[r] });
    messages.push({ reader: r, payload });
    ceiling.push({ readerId: plan.readerIds[r]!, payload, reads: pendingReads[r]! });
    pending[r] = [];
    pendingReads[r] = [];
  };
  for (let k = 0; k < rounds; k++) {
    for (let a = 0; a < plan.assets; a++) {
      const loc = where(plan.population, locations, a, k);
      const r = Math.floor(loc / plan.antennas);
      const at = plan.base + k * 1000 + (a % 1000);
      pending[r]!.push({
        tag: epc(first + a),
        antenna: (loc % plan.antennas) + 1,
        time: new Date(at).toISOString(),
      });
      pendingReads[r]!.push({
        assetId: plan.assetIds.get(first + a)!,
        locationId: plan.locationIds[loc]!,
        at,
      });
      if (pending[r]!.length === plan.batch) flush(r);
    }
  }
  for (let r = 0; r < readers; r++) if (pending[r]!.length > 0) flush(r);
  return { messages, ceiling };
}
