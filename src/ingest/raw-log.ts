import { isUtf8 } from 'node:buffer';
import { int4Array, int8Array, textArray } from '../db/binary-arrays.js';
import type { Tx } from '../db/pool.js';
import { listErrors } from './adapters/collector.js';
import { MAX_PAYLOAD_BYTES } from './adapters/payload.js';
import type { IngestOutcome } from './outcome.js';
import { rawLogRows } from './raw-log-rows.js';

/** What the raw log keeps of a reader message besides its outcome. */
export interface LoggedMessage {
  reader: { id: number };
  payload: Buffer | string;
  source: string;
  receivedAt: number;
}

/**
 * A payload or message as PostgreSQL can store it in text: NUL is not allowed there (a
 * payload carrying one would fail its transaction on every delivery), and a payload is
 * kept up to the adapters' size limit in UTF-8 bytes, with a note when it was cut. The cut
 * falls before the character the limit is inside, whose first bytes alone would be stored
 * as U+FFFD.
 */
export function storableText(value: Buffer | string): string {
  const size = typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : value.byteLength;
  let text: string;
  if (size <= MAX_PAYLOAD_BYTES) {
    text = typeof value === 'string' ? value : value.toString('utf8');
  } else {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
    let kept = MAX_PAYLOAD_BYTES;
    // A character is at most four bytes: further back the bytes were not UTF-8 anyway.
    for (let back = 0; back < 3 && kept > 0 && continues(bytes[kept]!); back++) kept--;
    if (continues(bytes[kept]!)) kept = MAX_PAYLOAD_BYTES;
    text = `${bytes.subarray(0, kept).toString('utf8')}\n[truncated: ${size} bytes in all, ${kept} kept]`;
  }
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
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

/** A byte that only continues a UTF-8 sequence (10xxxxxx), never starts one. */
const continues = (byte: number) => (byte & 0xc0) === 0x80;

/**
 * The payloads' storable bytes (storableBytes) one after another, and the length of each.
 * When every payload is a Buffer within the size limit that starts a UTF-8 sequence, the
 * concatenation is checked once instead of each payload: valid UTF-8 without NUL as a
 * whole, its sequences start where each payload does, so each payload is valid too. With
 * one read per message, two native calls per payload were a microsecond of each message.
 */
export function storablePayloads(payloads: ReadonlyArray<Buffer | string>): {
  all: Buffer;
  lengths: number[];
} {
  const asOne = payloads.every(
    (p) =>
      typeof p !== 'string' && p.byteLength <= MAX_PAYLOAD_BYTES && !(p.byteLength > 0 && continues(p[0]!)),
  );
  if (asOne) {
    const joined = concatenated(payloads as readonly Buffer[]);
    if (joined.all.indexOf(0) === -1 && isUtf8(joined.all)) return joined;
  }
  return concatenated(payloads.map(storableBytes));
}

/** The buffers one after another (the only one as it is), and the length of each. */
function concatenated(buffers: readonly Buffer[]): { all: Buffer; lengths: number[] } {
  return {
    all: buffers.length === 1 ? buffers[0]! : Buffer.concat(buffers),
    lengths: buffers.map((b) => b.byteLength),
  };
}

/**
 * The raw log rows of the messages, in one statement. Clean messages of one reader share
 * rows (./raw-log-rows.ts, migration 0069). The rows' payloads go as one binary parameter,
 * each cut out by its offset and length (no text[] literal to escape and build per
 * payload, nor for the server to parse); the receipt times as epoch milliseconds; what a
 * shared row keeps per message as flat arrays, each row taking its slice.
 */
export async function logMessages(
  tx: Tx,
  orgId: number,
  messages: LoggedMessage[],
  outcomes: IngestOutcome[],
): Promise<void> {
  const stored = storablePayloads(messages.map((m) => m.payload));
  const rows = rawLogRows(messages, stored.lengths, outcomes);
  const all = inRowOrder(stored, rows);
  const received = messages.map((m) => Math.floor(m.receivedAt));
  const row = {
    receivedMs: [] as number[],
    readerIds: [] as number[],
    sources: [] as string[],
    starts: [] as number[],
    lengths: [] as number[],
    good: [] as number[],
    bad: [] as number[],
    unknown: [] as number[],
    errors: [] as Array<string | null>,
    lo: [] as Array<number | null>,
    hi: [] as Array<number | null>,
  };
  const each = { bytes: [] as number[], afterMs: [] as number[], good: [] as number[] };
  let offset = 1;
  for (const members of rows) {
    const first = members[0]!;
    let bytes = 0;
    let good = 0;
    let earliest = received[first]!;
    for (const i of members) {
      bytes += stored.lengths[i]!;
      good += outcomes[i]!.good;
      if (received[i]! < earliest) earliest = received[i]!;
    }
    // A shared row's messages are clean (rawLogRows): its first one's problems are the row's.
    const o = outcomes[first]!;
    row.receivedMs.push(earliest);
    row.readerIds.push(messages[first]!.reader.id);
    row.sources.push(messages[first]!.source);
    row.starts.push(offset);
    row.lengths.push(bytes);
    row.good.push(good);
    row.bad.push(o.bad);
    row.unknown.push(o.unknown);
    // A ragged array of arrays does not fit text[][]; each message's errors go as JSON.
    // Capped already (messageOutcome's listErrors): cutting again would drop the line counting the rest.
    row.errors.push(o.errors.length ? JSON.stringify(o.errors.map(storableText)) : null);
    offset += bytes;
    if (members.length === 1) {
      row.lo.push(null);
      row.hi.push(null);
      continue;
    }
    row.lo.push(each.bytes.length + 1);
    for (const i of members) {
      each.bytes.push(stored.lengths[i]!);
      each.afterMs.push(received[i]! - earliest);
      each.good.push(outcomes[i]!.good);
    }
    row.hi.push(each.bytes.length);
  }
  await tx.query(
    `INSERT INTO raw_messages (received_at, org_id, reader_id, source, payload, good_reads, bad_reads, unknown_reads, errors,
       message_bytes, message_received_ms, message_good)
     SELECT timestamptz 'epoch' + v.received_ms * interval '1 millisecond', $1, v.reader_id, v.source,
       convert_from(substring($5::bytea FROM v.start FOR v.len), 'UTF8'), v.good, v.bad, v.unknown,
       CASE WHEN v.errors IS NULL THEN NULL ELSE ARRAY(SELECT json_array_elements_text(v.errors::json)) END,
       CASE WHEN v.lo IS NOT NULL THEN ($12::int[])[v.lo:v.hi] END,
       CASE WHEN v.lo IS NOT NULL THEN ($13::int[])[v.lo:v.hi] END,
       CASE WHEN v.lo IS NOT NULL THEN ($14::int[])[v.lo:v.hi] END
     FROM unnest($2::bigint[], $3::bigint[], $4::text[], $10::int[], $11::int[], $6::int[], $7::int[], $8::int[], $9::text[],
       $15::int[], $16::int[])
       AS v(received_ms, reader_id, source, start, len, good, bad, unknown, errors, lo, hi)`,
    [
      orgId,
      int8Array(row.receivedMs),
      int8Array(row.readerIds),
      textArray(row.sources),
      all,
      int4Array(row.good),
      int4Array(row.bad),
      int4Array(row.unknown),
      textArray(row.errors),
      int4Array(row.starts),
      int4Array(row.lengths),
      int4Array(each.bytes),
      int4Array(each.afterMs),
      int4Array(each.good),
      int4Array(row.lo),
      int4Array(row.hi),
    ],
  );
}

/** The payloads' bytes in the order of the rows' messages (as they are when that is their order). */
function inRowOrder(stored: { all: Buffer; lengths: number[] }, rows: number[][]): Buffer {
  let next = 0;
  const inOrder = rows.every((members) => members.every((i) => i === next++));
  if (inOrder) return stored.all;
  const starts: number[] = [];
  let at = 0;
  for (const length of stored.lengths) {
    starts.push(at);
    at += length;
  }
  const out = Buffer.allocUnsafe(stored.all.byteLength);
  let to = 0;
  for (const members of rows) {
    for (const i of members) {
      to += stored.all.copy(out, to, starts[i]!, starts[i]! + stored.lengths[i]!);
    }
  }
  return out;
}

/**
 * The raw log row of a handheld submission or an import batch (no reader), with its
 * outcome.
 */
export async function logRecords(
  tx: Tx,
  orgId: number,
  source: 'handheld' | 'import',
  raw: string,
  receivedAt: number,
  outcome: IngestOutcome,
): Promise<void> {
  await tx.query(
    `INSERT INTO raw_messages (received_at, org_id, reader_id, source, payload, good_reads, bad_reads, unknown_reads, errors)
     VALUES ($1, $2, NULL, $3, $4, $5, $6, $7, $8)`,
    [
      new Date(receivedAt),
      orgId,
      source,
      storableText(raw),
      outcome.good,
      outcome.bad,
      outcome.unknown,
      outcome.errors.length ? listErrors(outcome.errors, outcome.errors.length).map(storableText) : null,
    ],
  );
}
