import { isUtf8 } from 'node:buffer';
import { intArray } from '../db/array-literals.js';
import type { Tx } from '../db/pool.js';
import { assetsByTagKeys, matchKey, scanPointsOfReaders } from '../tracking/resolve.js';
import { placeSightings, type Sighting } from '../tracking/sightings.js';
import { MAX_PAYLOAD_BYTES } from './adapters/payload.js';
import type { AdapterResult } from './adapters/types.js';
import { claimDigests } from './message-digests.js';
import { bumpReaderCounters } from './reader-counters.js';
import { type ClockPolicy, type IngestOutcome, observedAt, type ReaderRef, storableText } from './service.js';

/** A reader message, parsed, waiting to be stored with others of its organization. */
export interface ReaderMessage {
  reader: ReaderRef;
  payload: Buffer | string;
  parsed: AdapterResult;
  source: 'mqtt' | 'webhook';
  receivedAt: number;
  /**
   * The payload's digest when a repeat of it is a redelivery, not a new observation
   * (IngestService: carriesReaderTimes); null when every copy is stored.
   */
  digest: Buffer | null;
}

/**
 * Stores reader messages of one organization in the caller's transaction, with a fixed
 * number of statements whatever their number: one per lookup (scan points, tags), the
 * sightings' few set-based statements, one for the raw log and two for the readers'
 * counters. Outcomes are per message, in order, exactly as if each had been stored alone;
 * a redelivered message (its digest already claimed) is stored and counted not at all.
 * With `commit`, the COMMIT is sent behind the last statement (the caller sends nothing
 * after); it throws StaleCounts when the batch must be run again with `countFirst: false`.
 */
export async function storeReaderMessages(
  tx: Tx,
  orgId: number,
  messages: ReaderMessage[],
  clock: ClockPolicy,
  options: { countFirst?: boolean; commit?: boolean } = {},
): Promise<IngestOutcome[]> {
  const keys = messages.map((m) => m.parsed.reads.map((r) => matchKey(r.tagType ?? 'rfid', r.tagValue)));
  const claimed = messages.filter((m) => m.digest !== null);
  // The claims and both lookups are written at once (the pool pipelines): one round trip.
  // The scan points first: their statement, all literals, joins the transaction's opening
  // (src/db/opening.ts); the claims' binary parameter could not.
  const [points, firsts, assets] = await Promise.all([
    scanPointsOfReaders(tx, orgId, [...new Set(messages.map((m) => m.reader.id))]),
    claimDigests(
      tx,
      orgId,
      claimed.map((m) => ({ readerId: m.reader.id, digest: m.digest!, receivedAt: m.receivedAt })),
    ),
    assetsByTagKeys(tx, orgId, [...new Set(keys.flat())]),
  ]);
  // A redelivery of a message already stored (or earlier in this batch) is skipped whole.
  const repeats = new Set(claimed.filter((_, i) => !firsts[i]));
  const outcomes: IngestOutcome[] = [];
  const sightings: Sighting[] = [];
  /** The message each sighting came from, to count what was stored per message. */
  const owner = new Map<Sighting, number>();
  messages.forEach((m, index) => {
    if (repeats.has(m)) {
      outcomes.push({ good: 0, bad: 0, unknown: 0, errors: [], duplicate: true });
      return;
    }
    const outcome: IngestOutcome = {
      good: 0,
      bad: m.parsed.errors.length,
      unknown: 0,
      errors: [...m.parsed.errors],
    };
    outcomes.push(outcome);
    const readerPoints = points.get(m.reader.id);
    m.parsed.reads.forEach((read, i) => {
      const assetId = assets.get(keys[index]![i]!);
      const locationId = readerPoints?.get(read.antenna) ?? readerPoints?.get(null);
      if (assetId === undefined) outcome.unknown++;
      else if (locationId === undefined) {
        outcome.bad++;
        outcome.errors.push(`no scan point for antenna ${read.antenna ?? '(none)'}`);
      } else {
        const s: Sighting = {
          assetId,
          locationId,
          at: observedAt(read.readerTime, m.receivedAt, clock),
          source: { type: 'reader', reader_id: m.reader.id, antenna: read.antenna },
        };
        sightings.push(s);
        owner.set(s, index);
      }
    });
  });
  const kept = messages.flatMap((m, i) => (repeats.has(m) ? [] : [{ m, o: outcomes[i]! }]));
  const logAndCount = async () => {
    if (kept.length === 0) return;
    const sent = [
      logMessages(
        tx,
        orgId,
        kept.map((k) => k.m),
        kept.map((k) => k.o),
      ),
      countOnReaders(
        tx,
        orgId,
        kept.map((k) => k.m),
        kept.map((k) => k.o),
      ),
    ];
    for (const p of sent) p.catch(() => undefined);
    await Promise.all(sent);
  };
  if (options.countFirst === false) {
    // After a StaleCounts: the outcomes as placed, written after the placing.
    const stored = await placeSightings(tx, orgId, sightings);
    for (const s of sightings) if (stored(s)) outcomes[owner.get(s)!]!.good++;
    await logAndCount();
    return outcomes;
  }
  // Every sighting counts as stored, which it is unless its asset or location was deleted
  // since the lookups above: the raw log rows and the readers' counters are then written
  // before the asset locks are taken (the lanes wait for one another there), in the same
  // write as the locks. Should one not be stored, the transaction is rolled back and run
  // again with the outcomes counted after the placing (StaleCounts).
  for (const s of sightings) outcomes[owner.get(s)!]!.good++;
  const logged = logAndCount();
  logged.catch(() => undefined);
  await placeSightings(tx, orgId, sightings, {
    whenLocked: (stored) => {
      if (!sightings.every(stored)) throw new StaleCounts();
    },
    commit: options.commit,
  });
  await logged;
  return outcomes;
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
 * The bytes the raw log stores of a payload: storableText's, taken as they are when they
 * already are that (valid UTF-8 without NUL, within the size limit), which is the rule.
 */
function storableBytes(payload: Buffer | string): Buffer {
  if (
    typeof payload !== 'string' &&
    payload.byteLength <= MAX_PAYLOAD_BYTES &&
    payload.indexOf(0) === -1 &&
    isUtf8(payload)
  ) {
    return payload;
  }
  return Buffer.from(storableText(payload), 'utf8');
}

/**
 * The raw log rows of the messages, in one statement. The payloads go as one binary
 * parameter, each cut out by its offset and length (no text[] literal to escape and build
 * per payload, nor for the server to parse); the receipt times as epoch milliseconds.
 */
async function logMessages(
  tx: Tx,
  orgId: number,
  messages: ReaderMessage[],
  outcomes: IngestOutcome[],
): Promise<void> {
  const bodies = messages.map((m) => storableBytes(m.payload));
  const starts: number[] = [];
  let offset = 1;
  for (const b of bodies) {
    starts.push(offset);
    offset += b.byteLength;
  }
  await tx.query(
    `INSERT INTO raw_messages (received_at, org_id, reader_id, source, payload, good_reads, bad_reads, unknown_reads, errors)
     SELECT timestamptz 'epoch' + v.received_ms * interval '1 millisecond', $1, v.reader_id, v.source,
       convert_from(substring($5::bytea FROM v.start FOR v.len), 'UTF8'), v.good, v.bad, v.unknown,
       CASE WHEN v.errors IS NULL THEN NULL ELSE ARRAY(SELECT json_array_elements_text(v.errors::json)) END
     FROM unnest($2::bigint[], $3::bigint[], $4::text[], $10::int[], $11::int[], $6::int[], $7::int[], $8::int[], $9::text[])
       AS v(received_ms, reader_id, source, start, len, good, bad, unknown, errors)`,
    [
      orgId,
      intArray(messages.map((m) => Math.floor(m.receivedAt))),
      intArray(messages.map((m) => m.reader.id)),
      messages.map((m) => m.source),
      bodies.length === 1 ? bodies[0]! : Buffer.concat(bodies),
      intArray(outcomes.map((o) => o.good)),
      intArray(outcomes.map((o) => o.bad)),
      intArray(outcomes.map((o) => o.unknown)),
      // A ragged array of arrays does not fit text[][]; each message's errors go as JSON.
      outcomes.map((o) =>
        o.errors.length ? JSON.stringify(o.errors.slice(0, 100).map(storableText)) : null,
      ),
      intArray(starts),
      intArray(bodies.map((b) => b.byteLength)),
    ],
  );
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
  const totals = new Map<number, { at: number; good: number; bad: number; unknown: number }>();
  messages.forEach((m, i) => {
    const o = outcomes[i]!;
    const t = totals.get(m.reader.id);
    if (t) {
      t.at = Math.max(t.at, m.receivedAt);
      t.good += o.good;
      t.bad += o.bad;
      t.unknown += o.unknown;
    } else totals.set(m.reader.id, { at: m.receivedAt, good: o.good, bad: o.bad, unknown: o.unknown });
  });
  const ids = [...totals.keys()].sort((a, b) => a - b);
  // Both at once: the server runs the update once the locks are held.
  const locked = tx.query(
    'SELECT 1 FROM readers WHERE org_id = $1 AND id = ANY($2::bigint[]) ORDER BY id FOR UPDATE',
    [orgId, ids],
  );
  locked.catch(() => undefined);
  const bumped = bumpReaderCounters(
    tx,
    orgId,
    ids.map((id) => {
      const t = totals.get(id)!;
      return { readerId: id, receivedAt: t.at, good: t.good, bad: t.bad, unknown: t.unknown };
    }),
  );
  bumped.catch(() => undefined);
  await locked;
  await bumped;
}
