import { int8Array } from '../db/binary-arrays.js';
import type { Tx } from '../db/pool.js';
import { assetsByTagKeys, scanPointsOfReaders } from '../tracking/resolve.js';
import { placeSightings, type Sighting } from '../tracking/sightings.js';
import { listErrors } from './adapters/collector.js';
import type { AdapterResult } from './adapters/types.js';
import { type ClockPolicy, observedAt } from './clock-policy.js';
import type { ReaderRef } from './directory.js';
import { claimDigests, type LegacyClaims, type MessageKey } from './message-digests.js';
import type { IngestOutcome } from './outcome.js';
import { logMessages } from './raw-log.js';
import { bumpReaderCounters, countsByReader } from './reader-counters.js';

/** A reader message, parsed, waiting to be stored with others of its organization. */
export interface ReaderMessage {
  reader: ReaderRef;
  payload: Buffer | string;
  parsed: AdapterResult;
  source: 'mqtt' | 'webhook';
  receivedAt: number;
  /**
   * The payload's key (digest and earliest reader time) when a repeat of it is a
   * redelivery, not a new observation (IngestService: carriesReaderTimes); null when every
   * copy is stored.
   */
  key: MessageKey | null;
}

/** What some of a message's reads came to: counts, and each error with the read it is about. */
export interface PlacedReads {
  good: number;
  bad: number;
  unknown: number;
  errors: Array<{ read: number; text: string }>;
}

/**
 * One transaction's share of a reader message (./reader-lanes.ts splits a message by the
 * lanes of its tags): some of its reads to place, and perhaps its book entry, that is its
 * digest claim, raw log row and reader counters, written once per message.
 */
export interface ReaderWork {
  message: ReaderMessage;
  /** The match key of each of the message's reads. */
  keys: string[];
  /** The group-commit lane the item is stored in. */
  lane: number;
  /** Indexes of the reads this item places; null: all of them. */
  reads: number[] | null;
  /** Writes the message's book entry; its outcome is then the message's. */
  book: boolean;
  /** Book items only: what the message's other items placed (committed before this one). */
  placed?: PlacedReads;
}

/** A work item's result: what its reads came to, and for a book item the message's outcome. */
export interface WorkOutcome {
  placed: PlacedReads;
  outcome?: IngestOutcome;
}

/** How many reads the item places. */
export const readCount = (w: ReaderWork) => (w.reads ? w.reads.length : w.keys.length);

/** Nothing placed yet. */
export const noReads = (): PlacedReads => ({ good: 0, bad: 0, unknown: 0, errors: [] });

/** Adds what `more` placed into `into`. */
export function addPlaced(into: PlacedReads, more: PlacedReads): PlacedReads {
  into.good += more.good;
  into.bad += more.bad;
  into.unknown += more.unknown;
  into.errors.push(...more.errors);
  return into;
}

/**
 * The message's outcome: its parse errors first, then its reads' errors in read order. Every
 * failed item counts as bad, also those past the parser's capped list of messages.
 */
function messageOutcome(m: ReaderMessage, placed: PlacedReads): IngestOutcome {
  const readErrors =
    placed.errors.length > 1 ? [...placed.errors].sort((a, b) => a.read - b.read) : placed.errors;
  return {
    good: placed.good,
    bad: placed.bad + m.parsed.failed,
    unknown: placed.unknown,
    errors: listErrors(
      [...m.parsed.errors, ...readErrors.map((e) => e.text)],
      m.parsed.failed + readErrors.length,
    ),
  };
}

/**
 * Stores reader work of one organization in the caller's transaction, with a fixed number
 * of statements whatever its size: one per lookup (scan points, tags), the sightings' few
 * set-based statements, one for the raw log and two for the readers' counters. A message's
 * outcome is exactly as if it had been stored alone; a redelivered message (its digest
 * already claimed) is logged and counted not at all, and its reads in a book item are not
 * placed (those of its other items were, which changes nothing: placing a read again does
 * not change the stays it is in). With `commit`, the COMMIT is sent behind the last
 * statement (the caller sends nothing after); it throws StaleCounts when the batch must be
 * run again with `countFirst: false`. `legacy`: the claims made before migration 0057
 * (claimDigests), none by default.
 */
export async function storeReaderMessages(
  tx: Tx,
  orgId: number,
  work: ReaderWork[],
  clock: ClockPolicy,
  options: { countFirst?: boolean; commit?: boolean; legacy?: LegacyClaims } = {},
): Promise<WorkOutcome[]> {
  const claimed = work.filter((w) => w.book && w.message.key !== null);
  const keys = new Set<string>();
  const readers = new Set<number>();
  for (const w of work) {
    const count = readCount(w);
    if (count > 0) readers.add(w.message.reader.id);
    for (let j = 0; j < count; j++) keys.add(w.keys[w.reads ? w.reads[j]! : j]!);
  }
  // The claims and both lookups are written at once (the pool pipelines): one round trip.
  // The scan points first: their statement, all literals, joins the transaction's opening
  // (src/db/opening.ts); the claims' binary parameter could not.
  const [points, firsts, assets] = await Promise.all([
    scanPointsOfReaders(tx, orgId, [...readers]),
    claimDigests(
      tx,
      orgId,
      // A literal, not a spread of the key: one object shape for every claim, built per message.
      claimed.map(({ message: m }) => ({
        digest: m.key!.digest,
        firstReadAt: m.key!.firstReadAt,
        readerId: m.reader.id,
        receivedAt: m.receivedAt,
      })),
      options.legacy,
    ),
    assetsByTagKeys(tx, orgId, [...keys]),
  ]);
  // A redelivery of a message already stored (or earlier in this batch) is skipped whole.
  const repeats = new Set(claimed.filter((_, i) => !firsts[i]));
  const results: WorkOutcome[] = [];
  const sightings: Sighting[] = [];
  /** The item each sighting came from (by position), to count what was stored per item. */
  const owners: number[] = [];
  work.forEach((w, index) => {
    const placed = noReads();
    results.push({ placed });
    if (repeats.has(w)) {
      results[index]!.outcome = { good: 0, bad: 0, unknown: 0, errors: [], duplicate: true };
      return;
    }
    const m = w.message;
    const readerPoints = points.get(m.reader.id);
    const count = readCount(w);
    for (let j = 0; j < count; j++) {
      const i = w.reads ? w.reads[j]! : j;
      const read = m.parsed.reads[i]!;
      const assetId = assets.get(w.keys[i]!);
      const locationId = readerPoints?.get(read.antenna) ?? readerPoints?.get(null);
      if (assetId === undefined) placed.unknown++;
      else if (locationId === undefined) {
        placed.bad++;
        placed.errors.push({ read: i, text: `no scan point for antenna ${read.antenna ?? '(none)'}` });
      } else {
        const s: Sighting = {
          assetId,
          locationId,
          at: observedAt(read.readerTime, m.receivedAt, clock),
          source: { type: 'reader', reader_id: m.reader.id, antenna: read.antenna },
        };
        sightings.push(s);
        owners.push(index);
      }
    }
  });
  const booked = work.flatMap((w, i) => (w.book && !repeats.has(w) ? [i] : []));
  const messages = booked.map((i) => work[i]!.message);
  /** The booked messages' outcomes, from what their items placed (so far). */
  const bookedOutcomes = () =>
    booked.map((i) => {
      const w = work[i]!;
      const all = addPlaced(addPlaced(noReads(), w.placed ?? noReads()), results[i]!.placed);
      const outcome = messageOutcome(w.message, all);
      results[i]!.outcome = outcome;
      return outcome;
    });
  if (options.countFirst === false) {
    // After a StaleCounts: the outcomes as placed, written after the placing.
    const stored = await placeSightings(tx, orgId, sightings);
    sightings.forEach((s, k) => {
      if (stored(s)) results[owners[k]!]!.placed.good++;
    });
    if (booked.length > 0) {
      const outcomes = bookedOutcomes();
      const sent = [
        logMessages(tx, orgId, messages, outcomes),
        countOnReaders(tx, orgId, messages, outcomes),
      ];
      for (const p of sent) p.catch(() => undefined);
      await Promise.all(sent);
    }
    return results;
  }
  // Every sighting counts as stored, which it is unless its asset or location was deleted
  // since the lookups above: the raw log rows go before the asset locks are taken, in the
  // same write as the locks. Should one not be stored, the transaction is rolled back and
  // run again with the outcomes counted after the placing (StaleCounts).
  for (const k of owners) results[k]!.placed.good++;
  const outcomes = bookedOutcomes();
  const logged = booked.length > 0 ? logMessages(tx, orgId, messages, outcomes) : Promise.resolve();
  logged.catch(() => undefined);
  await placeSightings(tx, orgId, sightings, {
    whenLocked: (stored) => {
      if (!sightings.every(stored)) throw new StaleCounts();
    },
    // The readers' rows last, just before the COMMIT: a reader's messages are booked by
    // every lane its tags fall in, and another lane waits for these row locks only while
    // this transaction commits, not while it places.
    last: () => (booked.length > 0 ? countOnReaders(tx, orgId, messages, outcomes) : Promise.resolve()),
    commit: options.commit,
  });
  await logged;
  return results;
}

/**
 * A batch's outcomes, counted before its locks, proved wrong once they were held (an asset
 * or location was deleted in between): the caller runs the batch again with
 * `countFirst: false`. Nothing was written that the rollback does not take back.
 */
export class StaleCounts extends Error {
  constructor() {
    super('an asset or location of the batch was deleted while it was being stored');
  }
}

/**
 * Adds the outcomes to the readers' counters. The rows are locked in id order first: two
 * batches naming the same readers then never wait for each other in a cycle. Everything
 * is sent before the first await, so a caller may send its next statements behind it.
 */
async function countOnReaders(
  tx: Tx,
  orgId: number,
  messages: ReaderMessage[],
  outcomes: IngestOutcome[],
): Promise<void> {
  const counts = countsByReader(messages, outcomes);
  const ids = counts.map((c) => c.readerId);
  // Both at once: the server runs the update once the locks are held.
  const locked = tx.query(
    'SELECT 1 FROM readers WHERE org_id = $1 AND id = ANY($2::bigint[]) ORDER BY id FOR UPDATE',
    [orgId, int8Array(ids)],
  );
  locked.catch(() => undefined);
  const bumped = bumpReaderCounters(tx, orgId, counts);
  bumped.catch(() => undefined);
  await locked;
  await bumped;
}
