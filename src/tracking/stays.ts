/**
 * An asset's history is a sequence of stays: arrival at a location and the last time it
 * was seen there. Storage grows with moves, not with reads. This module decides, for one
 * read, how the stays around its instant change; it is pure so the rules can be tested
 * exhaustively, and the repository applies its answer in SQL.
 *
 * Rules, applied to the window of stays around the read's instant:
 * - a read at the location of the stay that contains its instant (or of the latest stay
 *   before it) extends that stay;
 * - a read after a stay's last sighting at another location starts a stay of its own;
 * - a read inside a stay at another location splits the stay: the part before keeps the
 *   original start, the read becomes a stay, and the stay resumes 1 ms after the read
 *   (the first read after it is not kept, so its exact instant is unknown);
 * - two locations at one instant (the read's and a stay's stored arrival or last
 *   sighting): the stored observation stands unless its stay can resume after the read;
 * - finally, consecutive stays at one location are one stay (nothing was seen elsewhere
 *   between them), so they merge.
 * Late reads therefore never create a stay after the newest one, and the current
 * location never moves backwards.
 */
export interface Stay {
  id: number;
  locationId: number;
  startedAt: number;
  lastSeenAt: number;
  /**
   * A stored stay's start as the server printed it (microseconds, which startedAt's
   * milliseconds may cut): with its asset, the row's key (migration 0056).
   */
  key?: string;
}

export interface ReadAt {
  locationId: number;
  at: number;
}

export type StayChange =
  | { op: 'update'; id: number; startedAt: number; lastSeenAt: number }
  | { op: 'insert'; locationId: number; startedAt: number; lastSeenAt: number }
  | { op: 'delete'; id: number };

interface Draft {
  id?: number;
  locationId: number;
  startedAt: number;
  lastSeenAt: number;
}

/**
 * `window` holds, in start order, the (up to) two latest stays with startedAt <= read.at
 * and the earliest stay with startedAt > read.at: all a read can touch.
 */
export function placeRead(read: ReadAt, window: readonly Stay[]): StayChange[] {
  const drafts: Draft[] = window.map((s) => ({ ...s }));
  const beforeIndex = drafts.findLastIndex((s) => s.startedAt <= read.at);
  const before = drafts[beforeIndex];
  const after = drafts[beforeIndex + 1];
  const readStay: Draft = { locationId: read.locationId, startedAt: read.at, lastSeenAt: read.at };

  if (!before) {
    drafts.unshift(readStay);
  } else if (before.locationId === read.locationId) {
    before.lastSeenAt = Math.max(before.lastSeenAt, read.at);
  } else if (read.at > before.lastSeenAt) {
    drafts.splice(beforeIndex + 1, 0, readStay);
  } else {
    const resumeAt = read.at + 1;
    const canResume = before.lastSeenAt >= resumeAt && (!after || resumeAt < after.startedAt);
    // No room to resume means the read claims the instant of the stay's stored last
    // sighting (or of its only one): the stored observation stands.
    if (!canResume) return [];
    if (before.startedAt === read.at) {
      before.startedAt = resumeAt;
      drafts.splice(beforeIndex, 0, readStay);
    } else {
      const resumed: Draft = {
        locationId: before.locationId,
        startedAt: resumeAt,
        lastSeenAt: before.lastSeenAt,
      };
      before.lastSeenAt = read.at - 1;
      drafts.splice(beforeIndex + 1, 0, readStay, resumed);
    }
  }
  return diff(window, mergeRuns(drafts));
}

/** Consecutive stays at one location become one, keeping the earliest stored id. */
function mergeRuns(drafts: Draft[]): Draft[] {
  const out: Draft[] = [];
  for (const d of drafts) {
    const last = out.at(-1);
    if (last && last.locationId === d.locationId) {
      last.lastSeenAt = Math.max(last.lastSeenAt, d.lastSeenAt);
      last.startedAt = Math.min(last.startedAt, d.startedAt);
      // The later stored row, if any, disappears: diff() deletes window rows not kept.
      last.id ??= d.id;
    } else {
      out.push({ ...d });
    }
  }
  return out;
}

function diff(window: readonly Stay[], drafts: Draft[]): StayChange[] {
  const updates: StayChange[] = [];
  const inserts: StayChange[] = [];
  const kept = new Set<number>();
  for (const d of drafts) {
    if (d.id === undefined) {
      inserts.push({
        op: 'insert',
        locationId: d.locationId,
        startedAt: d.startedAt,
        lastSeenAt: d.lastSeenAt,
      });
      continue;
    }
    kept.add(d.id);
    const old = window.find((s) => s.id === d.id);
    if (old && (old.startedAt !== d.startedAt || old.lastSeenAt !== d.lastSeenAt)) {
      updates.push({ op: 'update', id: d.id, startedAt: d.startedAt, lastSeenAt: d.lastSeenAt });
    }
  }
  const deletes: StayChange[] = window
    .filter((s) => !kept.has(s.id))
    .map((s) => ({ op: 'delete', id: s.id }));
  // Applied in this order, one statement each, the unique (asset, started_at) never sees
  // two rows at once: deletes free their starts, then updates move starts away (a read at
  // a stay's very start moves that stay 1 ms on), and only then do new stays take theirs.
  return [...deletes, ...updates, ...inserts];
}

/** Applies changes to an in-memory, start-ordered list (tests and the simulator). */
export function applyChanges(stays: Stay[], changes: StayChange[], nextId: () => number): Stay[] {
  let out = stays.map((s) => ({ ...s }));
  for (const c of changes) {
    if (c.op === 'insert') {
      out.push({ id: nextId(), locationId: c.locationId, startedAt: c.startedAt, lastSeenAt: c.lastSeenAt });
    } else if (c.op === 'delete') {
      out = out.filter((s) => s.id !== c.id);
    } else {
      const s = out.find((x) => x.id === c.id);
      if (s) {
        s.startedAt = c.startedAt;
        s.lastSeenAt = c.lastSeenAt;
      }
    }
  }
  return out.sort((a, b) => a.startedAt - b.startedAt);
}

/** The window `placeRead` needs, taken from a start-ordered list. */
export function windowAt(stays: readonly Stay[], at: number): Stay[] {
  const firstAfter = stays.findIndex((s) => s.startedAt > at);
  const end = firstAfter === -1 ? stays.length : firstAfter;
  return stays.slice(Math.max(0, end - 2), firstAfter === -1 ? end : end + 1);
}
