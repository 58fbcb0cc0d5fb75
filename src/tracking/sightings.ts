import { commitBehind } from '../db/commit.js';
import type { Tx } from '../db/pool.js';
import { movesWanted } from '../events/move-subscriptions.js';
import { type Move, type ReadSource, recordMoves } from '../events/outbox.js';
import { type LatePlan, planLateReads } from './late-reads.js';
import { refreshCurrentLocation, setCurrentLocations } from './positions-repository.js';
import {
  appendStays,
  extendStays,
  keyOf,
  loadStayRanges,
  lockAssets,
  lockLocations,
  type NewestStay,
  recordSighting,
  writeStayChanges,
} from './repository.js';

/** What placeLateReads answers for an asset whose newest stay its placing left as it was. */
const UNCHANGED = 'unchanged' as const;

/** Assets whose late reads are placed read by read at once (their statements pipelined). */
const LATE_ASSETS_AT_ONCE = 16;

/**
 * Most stays of one asset read to place its late reads in memory (the stays between its
 * batch's first and last instant: as many as it moved in that time); beyond, read by read.
 */
const LATE_RANGE_STAYS = 1_000;

/** An asset's reads reaching into its past, in the order they are placed, and its newest stay under the lock. */
interface PastReads {
  assetId: number;
  reads: Sighting[];
  newest: NewestStay | null;
}

/** One resolved observation: this asset was at this location at this instant (epoch ms). */
export interface Sighting {
  assetId: number;
  locationId: number;
  at: number;
  /** Where the read came from, for the asset.moved event it may cause. */
  source?: ReadSource;
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

export interface AppendPlan {
  /** The newest stored stay's new last sighting, when the batch extends it. */
  extendTo: number | null;
  /** New stays after it, in time order. */
  inserts: Array<{ locationId: number; startedAt: number; lastSeenAt: number; source?: ReadSource }>;
}

/**
 * What placing a batch of one asset's sightings read by read (placeRead) comes to, when
 * every read is later than the asset's newest stored sighting and no two reads at one
 * instant name two locations: a read at the current location extends the current stay, a
 * read elsewhere starts a new one. Null when the batch does not qualify; it is then
 * applied read by read. `sorted` is in time order.
 */
export function planAppend(
  sorted: Sighting[],
  newest: Pick<NewestStay, 'id' | 'locationId' | 'lastSeenAt'> | null,
): AppendPlan | null {
  if (newest && sorted.length > 0 && sorted[0]!.at <= newest.lastSeenAt) return null;
  const tie = sorted.some(
    (s, i) => i > 0 && s.at === sorted[i - 1]!.at && s.locationId !== sorted[i - 1]!.locationId,
  );
  if (tie) return null;
  const plan: AppendPlan = { extendTo: null, inserts: [] };
  let current = newest?.locationId ?? null;
  for (const s of sorted) {
    const open = plan.inserts.at(-1);
    if (s.locationId === current) {
      if (open) open.lastSeenAt = s.at;
      else plan.extendTo = s.at;
    } else {
      plan.inserts.push({ locationId: s.locationId, startedAt: s.at, lastSeenAt: s.at, source: s.source });
      current = s.locationId;
    }
  }
  return plan;
}

/**
 * Stores sightings of any number of assets in the caller's transaction. The usual batch
 * (every read newer than what is stored) is applied in two statements for all its assets
 * (planAppend); batches reaching into an asset's past are placed read by read.
 */
export async function storeSightings(tx: Tx, orgId: number, sightings: Sighting[]): Promise<number> {
  const stored = await placeSightings(tx, orgId, sightings);
  return sightings.filter(stored).length;
}

/** What a caller storing several messages at once asks of placeSightings. */
export interface PlaceOptions {
  /**
   * Called once the locks are held, with the predicate placeSightings returns, before
   * anything is written; throwing there writes nothing more (the caller rolls back).
   */
  whenLocked?: (stored: (s: Sighting) => boolean) => void;
  /**
   * Sends the transaction's COMMIT behind the last write (commitBehind), so the asset locks
   * are held for the server's work alone: the caller sends nothing after placeSightings.
   */
  commit?: boolean;
  /**
   * Sends the caller's last statements, behind the writes and before the COMMIT (with
   * `commit`), without waiting for their answers; placeSightings waits for them with its own.
   */
  last?: () => Promise<unknown>;
}

/**
 * storeSightings, telling which sightings were stored: not those of an asset or at a
 * location deleted meanwhile. Callers storing several messages at once count per message.
 * Every statement that need not wait for an answer is sent without waiting (the pool
 * pipelines): the locks and the newest stays in one round trip, the writes in another.
 */
export async function placeSightings(
  tx: Tx,
  orgId: number,
  sightings: Sighting[],
  options: PlaceOptions = {},
): Promise<(s: Sighting) => boolean> {
  if (sightings.length === 0) {
    options.whenLocked?.(() => false);
    const last = options.last?.();
    last?.catch(() => undefined);
    if (options.commit) commitBehind(tx);
    await last;
    return () => false;
  }
  // First, so that the check's snapshot follows the lock (movesWanted).
  const subscriptions = movesWanted(tx, orgId);
  subscriptions.catch(() => undefined);
  // A location being deleted holds its row lock while it counts the assets placed there;
  // this share lock waits for that and then sees it deleted, or makes the delete see us.
  // Then the assets, in the same write: an asset seen only at a deleted location is
  // locked and left alone.
  const placing = lockLocations(tx, orgId, [...new Set(sightings.map((s) => s.locationId))]);
  const locking = lockAssets(tx, orgId, [...new Set(sightings.map((s) => s.assetId))]);
  locking.catch(() => undefined);
  const placeable = await placing;
  const { newest: live, validity } = await locking;
  // Answered before the locks were (it was sent first).
  const wanted = await subscriptions;
  const stored = (s: Sighting) => placeable.has(s.locationId) && live.has(s.assetId);
  options.whenLocked?.(stored);
  const byAsset = new Map<number, Sighting[]>();
  for (const s of sightings) {
    if (!stored(s)) continue;
    const list = byAsset.get(s.assetId);
    if (list) list.push(s);
    else byAsset.set(s.assetId, [s]);
  }
  const extend: Parameters<typeof extendStays>[2] = [];
  const append: Array<{ assetId: number; locationId: number; startedAt: number; lastSeenAt: number }> = [];
  const current: Parameters<typeof setCurrentLocations>[2] = [];
  const readByRead: number[] = [];
  const moves: Move[] = [];
  const pastReads: PastReads[] = [];
  for (const [assetId, list] of byAsset) {
    const newest = live.get(assetId) ?? null;
    list.sort((a, b) => a.at - b.at);
    const plan = planAppend(list, newest);
    if (plan) {
      if (plan.extendTo !== null && newest)
        extend.push({ assetId, key: newest.key, lastSeenAt: plan.extendTo });
      let from = newest?.locationId ?? null;
      for (const { source, ...stay } of plan.inserts) {
        append.push({ assetId, ...stay });
        moves.push({ assetId, from, to: stay.locationId, at: stay.startedAt, source: source ?? null });
        from = stay.locationId;
      }
      const last = plan.inserts.at(-1);
      const valid = validity.get(assetId)!;
      if (last) {
        current.push({ assetId, locationId: last.locationId, lastSeenAt: last.lastSeenAt, validity: valid });
      } else if (newest && plan.extendTo !== null) {
        current.push({ assetId, locationId: newest.locationId, lastSeenAt: plan.extendTo, validity: valid });
      }
      continue;
    }
    readByRead.push(assetId);
    pastReads.push({ assetId, reads: compact(list, newest?.lastSeenAt ?? null), newest });
  }
  // The appending assets' writes go at once; the late reads' assets are others, so their
  // statements may follow in any order.
  const writes = [
    extendStays(tx, orgId, extend),
    appendStays(tx, orgId, append),
    // The newest stay of an appended asset is known here; the others are read back below.
    setCurrentLocations(tx, orgId, current),
  ];
  for (const w of writes) w.catch(() => undefined);
  if (readByRead.length > 0) {
    const placedNewest = await placeLateReads(tx, orgId, pastReads);
    // Late reads rewrite history; they are an event only where the current location changed.
    const moved = (assetId: number, to: number, at: number) => {
      const from = live.get(assetId)?.locationId ?? null;
      if (from === to) return;
      const read = byAsset.get(assetId)?.find((s) => s.at === at && s.locationId === to);
      moves.push({ assetId, from, to, at, source: read?.source ?? null });
    };
    // The newest stay of an asset placed in memory is known: its position is written as
    // the appended ones' are, and only where it changed (an unchanged position is not
    // written at all, not even locked). The others' newest stays are read back.
    const known: typeof current = [];
    const unknown: number[] = [];
    for (const assetId of readByRead) {
      const placed = placedNewest.get(assetId);
      if (placed === UNCHANGED) continue;
      if (!placed) {
        unknown.push(assetId);
        continue;
      }
      const before = live.get(assetId);
      if (before?.locationId === placed.locationId && before.lastSeenAt === placed.lastSeenAt) continue;
      const valid = validity.get(assetId)!;
      known.push({ assetId, locationId: placed.locationId, lastSeenAt: placed.lastSeenAt, validity: valid });
      moved(assetId, placed.locationId, placed.startedAt);
    }
    const knownWritten = setCurrentLocations(tx, orgId, known);
    knownWritten.catch(() => undefined);
    writes.push(knownWritten);
    for (const change of await refreshCurrentLocation(tx, orgId, unknown)) {
      moved(change.assetId, change.locationId, change.startedAt);
    }
  }
  const recorded = recordMoves(tx, orgId, moves, wanted);
  recorded.catch(() => undefined);
  const last = options.last?.();
  last?.catch(() => undefined);
  if (options.commit) commitBehind(tx);
  await Promise.all([...writes, recorded, last]);
  return stored;
}

/**
 * Places batches reaching into their assets' past: in memory on the stays around them
 * (planLateReads), written back in a few statements for all of them; an asset the range
 * cannot stand in for goes read by read in the database.
 */
async function placeLateReads(
  tx: Tx,
  orgId: number,
  pastReads: PastReads[],
): Promise<Map<number, LatePlan['last'] | typeof UNCHANGED>> {
  const placedNewest = new Map<number, LatePlan['last'] | typeof UNCHANGED>();
  if (pastReads.length === 0) return placedNewest;
  const ranges = await loadStayRanges(
    tx,
    orgId,
    pastReads.map(({ assetId, reads }) => ({ assetId, from: reads[0]!.at, to: reads.at(-1)!.at })),
    LATE_RANGE_STAYS,
  );
  const planned: Parameters<typeof writeStayChanges>[2] = { deletes: [], updates: [], inserts: [] };
  const oneByOne: Array<{ assetId: number; reads: Sighting[] }> = [];
  for (const late of pastReads) {
    const range = ranges.get(late.assetId);
    const plan = range ? planLateReads(range, late.reads) : null;
    if (!plan) {
      oneByOne.push(late);
      continue;
    }
    const { assetId } = late;
    // The range ends at the newest stay when nothing starts after it, or when its last
    // stay is the newest one lockAssets read under the asset's lock; where it ends before,
    // the newest stay is outside it and the placing left it as it was.
    const reachesNewest =
      range!.completeAfter || (late.newest !== null && range!.stays.at(-1)?.id === late.newest.id);
    placedNewest.set(assetId, reachesNewest ? plan.last : UNCHANGED);
    for (const id of plan.deletes) planned.deletes.push(keyOf(range!.stays, assetId, id));
    for (const { id, ...u } of plan.updates)
      planned.updates.push({ ...keyOf(range!.stays, assetId, id), ...u });
    for (const stay of plan.inserts) planned.inserts.push({ assetId: late.assetId, ...stay });
  }
  await writeStayChanges(tx, orgId, planned);
  // Assets are independent of each other: several are placed at once, so the pool's
  // pipelining overlaps their round trips. A few at a time, not all: a statement's read
  // timeout runs from when it is sent, so a long queue of them behind one another could
  // time out on a loaded server.
  let next = 0;
  const placeOne = async () => {
    for (let i = next++; i < oneByOne.length; i = next++) {
      const { assetId, reads } = oneByOne[i]!;
      for (const s of reads) await recordSighting(tx, orgId, assetId, s.locationId, s.at);
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: LATE_ASSETS_AT_ONCE }, placeOne));
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  return placedNewest;
}
