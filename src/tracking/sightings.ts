import type { Tx } from '../db/pool.js';
import { lockAssets, recordSighting, refreshCurrentLocation } from './repository.js';

/** One resolved observation: this asset was at this location at this instant (epoch ms). */
export interface Sighting {
  assetId: number;
  locationId: number;
  at: number;
}

/**
 * Reads of a batch that are all newer than everything stored for the asset only extend
 * or append: of each run of reads at one location, the first and last decide the result,
 * so the rest are skipped. Batches reaching into the past are applied read by read.
 */
export function compact(sorted: Sighting[], lastStored: number | null): Sighting[] {
  if (lastStored !== null && sorted.length > 0 && sorted[0]!.at <= lastStored) return sorted;
  // Two locations at one instant: placeRead keeps the first, which may empty a run's
  // start, so such batches are applied read by read too.
  const tie = sorted.some(
    (s, i) => i > 0 && s.at === sorted[i - 1]!.at && s.locationId !== sorted[i - 1]!.locationId,
  );
  if (tie) return sorted;
  const out: Sighting[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const s = sorted[i]!;
    const prev = sorted[i - 1];
    const next = sorted[i + 1];
    const runStart = !prev || prev.locationId !== s.locationId;
    const runEnd = !next || next.locationId !== s.locationId;
    if (runStart || runEnd) out.push(s);
  }
  return out;
}

/** Stores sightings of any number of assets in the caller's transaction. */
export async function storeSightings(tx: Tx, orgId: number, sightings: Sighting[]): Promise<number> {
  if (sightings.length === 0) return 0;
  const byAsset = new Map<number, Sighting[]>();
  for (const s of sightings) {
    const list = byAsset.get(s.assetId);
    if (list) list.push(s);
    else byAsset.set(s.assetId, [s]);
  }
  const live = await lockAssets(tx, orgId, [...byAsset.keys()]);
  let stored = 0;
  for (const [assetId, list] of byAsset) {
    if (!live.has(assetId)) continue;
    list.sort((a, b) => a.at - b.at);
    for (const s of compact(list, live.get(assetId) ?? null)) {
      await recordSighting(tx, orgId, assetId, s.locationId, s.at);
    }
    stored += list.length;
  }
  await refreshCurrentLocation(tx, orgId, [...live.keys()]);
  return stored;
}
