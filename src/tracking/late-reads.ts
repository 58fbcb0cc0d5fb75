import type { Sighting } from './sightings.js';
import { applyChanges, placeRead, type Stay } from './stays.js';

/**
 * Late reads (a batch reaching into an asset's past) placed in memory instead of one
 * statement or more per read: the stays around the batch's instants are read once
 * (loadStayRanges), each read is placed by placeRead on that list as it would be on the
 * table, and the difference is written back in three set-based statements for every asset
 * of the group. The result is the one placing the reads one by one in the database gives;
 * where it could differ (below) the asset's reads go read by read instead.
 */

/** The stays of one asset around a batch of its late reads, as loadStayRanges reads them. */
export interface StayRange {
  /**
   * In start order: from the second-latest stay starting at or before the batch's first
   * instant (or the asset's first stay) through the first stay starting after its last
   * instant (or the asset's last stay).
   */
  stays: Stay[];
  /** No stored stay starts before the first of `stays` (fewer than two started by the first read). */
  completeBefore: boolean;
  /** No stored stay starts after the last of `stays`. */
  completeAfter: boolean;
}

/** What placing the reads changes: applied deletes first, then updates, then inserts. */
export interface LatePlan {
  deletes: number[];
  updates: Array<{ id: number; startedAt: number; lastSeenAt: number }>;
  inserts: Array<{ locationId: number; startedAt: number; lastSeenAt: number }>;
  /**
   * The range's latest stay once the reads are placed: the asset's newest stay when the
   * range reaches its newest (nothing stored starts after the range's last stay).
   */
  last: Pick<Stay, 'locationId' | 'startedAt' | 'lastSeenAt'> | null;
}

/**
 * Places `reads` (of one asset, in the order they are to be applied) on `range` in memory.
 * Null when the range cannot stand in for the table: a read whose window (placeRead's two
 * latest stays at or before it and the first after it) would reach past the loaded stays
 * after earlier reads merged some away, or updates the database could not apply in one
 * statement (a stay taking the start another updated stay still holds: the unique
 * (asset, started_at) index is checked row by row). The caller then places the reads one
 * by one in the database.
 */
export function planLateReads(range: StayRange, reads: readonly Sighting[]): LatePlan | null {
  const stays = range.stays.map((s) => ({ ...s }));
  let nextId = 0;
  const newId = () => --nextId;
  for (const read of reads) {
    const before = startedBy(stays, read.at);
    const after = stays.length - before;
    if (before < 2 && !range.completeBefore) return null;
    if (after < 1 && !range.completeAfter) return null;
    // The window (windowAt's, found by the search above): what the read can change.
    const from = Math.max(0, before - 2);
    const to = after > 0 ? before + 1 : before;
    if (placedInPlace(stays, from, to, before, read, newId)) continue;
    const window = stays.slice(from, to);
    const changes = placeRead({ locationId: read.locationId, at: read.at }, window);
    if (changes.length === 0) continue;
    // Only the window changes, and its new stays start strictly between its neighbours
    // (stored starts are unique, and placeRead's new ones fall inside the window), so they
    // replace it where it stands. Should that ever not hold, the database places the reads.
    const replaced = applyChanges(window, changes, newId);
    const first = replaced[0]?.startedAt;
    const last = replaced.at(-1)?.startedAt;
    if (first !== undefined && from > 0 && first <= stays[from - 1]!.startedAt) return null;
    if (last !== undefined && to < stays.length && last >= stays[to]!.startedAt) return null;
    stays.splice(from, to - from, ...replaced);
  }
  return planOfPlaced(range, stays);
}

/**
 * The writes that turn `range` into `placed` (the range with the reads placed, new stays
 * with negative ids), or null when one statement could not apply them (see planLateReads).
 */
export function planOfPlaced(range: StayRange, placed: readonly Stay[]): LatePlan | null {
  const original = new Map(range.stays.map((s) => [s.id, s]));
  const latest = placed.at(-1);
  const plan: LatePlan = {
    deletes: [],
    updates: [],
    inserts: [],
    last: latest
      ? { locationId: latest.locationId, startedAt: latest.startedAt, lastSeenAt: latest.lastSeenAt }
      : null,
  };
  const kept = new Set<number>();
  for (const s of placed) {
    if (s.id < 0) {
      plan.inserts.push({ locationId: s.locationId, startedAt: s.startedAt, lastSeenAt: s.lastSeenAt });
      continue;
    }
    kept.add(s.id);
    const old = original.get(s.id)!;
    if (old.startedAt !== s.startedAt || old.lastSeenAt !== s.lastSeenAt) {
      plan.updates.push({ id: s.id, startedAt: s.startedAt, lastSeenAt: s.lastSeenAt });
    }
  }
  for (const s of range.stays) if (!kept.has(s.id)) plan.deletes.push(s.id);
  // An update moving a stay's start onto the start another updated stay has until its own
  // update runs would trip the unique index within the one statement.
  const heldBefore = new Map(plan.updates.map((u) => [original.get(u.id)!.startedAt, u.id] as const));
  for (const u of plan.updates) {
    const holder = heldBefore.get(u.startedAt);
    if (holder !== undefined && holder !== u.id) return null;
  }
  // The index allows one stay per instant; placeRead keeps to that, and this checks it.
  if (new Set(placed.map((s) => s.startedAt)).size !== placed.length) return null;
  return plan;
}

/**
 * The reads placeRead answers without splitting a stay, placed on `stays` where they stand
 * (the window `from`..`to`, `before` of whose stays start at or before the read): a read
 * at the location of the stay it falls in or after extends it, one after that stay's last
 * sighting at another location starts a stay of its own, or moves the next stay's start
 * back when that one is at the read's location. Placing a read through placeRead clones
 * and re-sorts its window, which in a moving population (every read late behind another
 * reader's) was a quarter of what ingest allocated. False, having changed nothing, for any
 * other read, or when the window holds two consecutive stays at one location (placeRead
 * would merge them whatever the read): the caller places it through placeRead.
 */
function placedInPlace(
  stays: Stay[],
  from: number,
  to: number,
  before: number,
  read: Sighting,
  newId: () => number,
): boolean {
  for (let i = from + 1; i < to; i++) if (stays[i]!.locationId === stays[i - 1]!.locationId) return false;
  const prev = before > 0 ? stays[before - 1]! : undefined;
  const next = before < to ? stays[before]! : undefined;
  if (prev?.locationId === read.locationId) {
    if (read.at > prev.lastSeenAt) prev.lastSeenAt = read.at;
    return true;
  }
  if (prev && read.at <= prev.lastSeenAt) return false;
  if (next?.locationId === read.locationId) next.startedAt = read.at;
  else
    stays.splice(before, 0, {
      id: newId(),
      locationId: read.locationId,
      startedAt: read.at,
      lastSeenAt: read.at,
    });
  return true;
}

/** How many of the start-ordered `stays` start at or before `at` (the first after it, by bisection). */
function startedBy(stays: readonly Stay[], at: number): number {
  let lo = 0;
  let hi = stays.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (stays[mid]!.startedAt <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
