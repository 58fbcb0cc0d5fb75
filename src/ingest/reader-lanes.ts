import { matchKey } from '../tracking/resolve.js';
import type { ReaderMessage, ReaderWork } from './reader-batch.js';

/**
 * Lanes per organization for reader messages, and so the transactions it may run at once.
 *
 * A read goes to the lane of its tag (laneOfKey), whichever reader saw it: all reads of
 * one tag are placed by one lane, one transaction at a time, in the order they came. Lanes
 * by reader made an asset that passes from one reader to another a row that two lanes'
 * transactions lock at once: the second waited for the first's whole transaction, and
 * could commit a newer read before the older one, which then took the slow path for late
 * reads. With assets crossing readers (the moving population of `npm run bench:ingest`)
 * that made the lanes take turns (docs/ingest-history.md, "Lanes by tag").
 */
export const READER_LANES = 4;

/** The lane of a tag's reads: FNV-1a of its match key, the same for every reader and instance. */
export function laneOfKey(key: string, lanes = READER_LANES): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % lanes;
}

/**
 * A reader's lane for the book entries (raw log row, digest claim, counters) of its
 * messages split over several lanes, and of those without reads: the same lane for all of
 * a reader's, so that their transactions do not wait for one another's lock on its row.
 */
export const homeLane = (readerId: number, lanes = READER_LANES) => readerId % lanes;

/** How one message is stored: whole in one item, or in parts followed by its book entry. */
export type MessagePlan = { whole: ReaderWork } | SplitPlan;

/** A message split over lanes: its parts, and its book entry once they have committed. */
export interface SplitPlan {
  parts: ReaderWork[];
  book: ReaderWork;
}

/**
 * Splits a message by the lanes of its reads' tags. A message whose reads all fall in one
 * lane (every one-read message) is one item there, placed and booked in one transaction;
 * one without reads goes to its reader's lane. Otherwise each lane gets the message's
 * reads of its tags (an item without book), and the book entry follows in the reader's
 * lane once they have all committed: the raw log row, the counters and the digest claim
 * are then written once for the message, in one transaction. A crash between leaves reads
 * placed and the message unacknowledged; its redelivery places them again, which changes
 * nothing, and books it once.
 */
export function planMessage(message: ReaderMessage, lanes = READER_LANES): MessagePlan {
  const keys = message.parsed.reads.map((r) => matchKey(r.tagType ?? 'rfid', r.tagValue));
  const home = homeLane(message.reader.id, lanes);
  if (keys.length === 0) return { whole: { message, keys, lane: home, reads: null, book: true } };
  const first = laneOfKey(keys[0]!, lanes);
  let byLane: number[][] | null = null;
  for (let i = 1; i < keys.length; i++) {
    const lane = laneOfKey(keys[i]!, lanes);
    if (byLane === null) {
      if (lane === first) continue;
      // The first read elsewhere: every read before it was in the first one's lane.
      byLane = Array.from({ length: lanes }, () => []);
      for (let j = 0; j < i; j++) byLane[first]!.push(j);
    }
    byLane[lane]!.push(i);
  }
  if (byLane === null) return { whole: { message, keys, lane: first, reads: null, book: true } };
  const parts: ReaderWork[] = [];
  byLane.forEach((reads, lane) => {
    if (reads.length > 0) parts.push({ message, keys, lane, reads, book: false });
  });
  return { parts, book: { message, keys, lane: home, reads: [], book: true } };
}
