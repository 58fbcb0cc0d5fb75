import type { IngestOutcome } from './outcome.js';

/**
 * The most payload bytes a raw log row of several messages holds: far from the 1 GB a
 * value may take, and the row is compressed whole when it is stored.
 */
export const RAW_ROW_BYTES = 1024 * 1024;

/** What rawLogRows needs of a message besides its stored size. */
export interface RowMessage {
  reader: { id: number };
  source: string;
}

/**
 * The raw log's rows for messages stored together (migration 0069): the messages of one
 * reader and source without a bad read, an unknown tag or an error share rows, up to
 * `maxBytes` of payload each (`bytes`: each payload's size as stored); any other message,
 * or one left alone, has a row of its own. Each row lists the messages' indexes, in the
 * order they were given.
 */
export function rawLogRows(
  messages: readonly RowMessage[],
  bytes: readonly number[],
  outcomes: readonly IngestOutcome[],
  maxBytes = RAW_ROW_BYTES,
): number[][] {
  const rows: number[][] = [];
  const open = new Map<string, { row: number[]; bytes: number }>();
  messages.forEach((m, i) => {
    const o = outcomes[i]!;
    if (o.bad > 0 || o.unknown > 0 || o.errors.length > 0) {
      rows.push([i]);
      return;
    }
    const key = `${m.reader.id}:${m.source}`;
    const current = open.get(key);
    if (current && current.bytes + bytes[i]! <= maxBytes) {
      current.row.push(i);
      current.bytes += bytes[i]!;
      return;
    }
    const row = [i];
    rows.push(row);
    open.set(key, { row, bytes: bytes[i]! });
  });
  return rows;
}
