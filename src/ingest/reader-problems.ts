import type { Tx } from '../db/pool.js';
import { notFound } from '../errors.js';
import { assetsByTagKeys, matchKey } from '../tracking/resolve.js';
import { parsePayload } from './adapters/index.js';
import type { ReaderFamily, TagType } from './adapters/types.js';
import { DEFAULT_CLOCK_POLICY, observedAt } from './clock-policy.js';

/**
 * Messages shown per reader, and how many of the organization's latest raw log rows are
 * looked through: a message with a problem has a row of its own, and the clean messages of
 * a reader share rows (migration 0069), so they are many more messages.
 */
export const PROBLEMS_SHOWN = 10;
const MESSAGES_SCANNED = 10_000;
/** Enough of a payload to read the tag values in it, not a whole batch. */
export const PAYLOAD_SHOWN = 2000;
/** Entries of the unknown-tag and error lists. */
export const LATEST_SHOWN = 20;

export interface ProblemMessage {
  receivedAt: Date;
  badReads: number;
  unknownReads: number;
  errors: string[];
  /** The first PAYLOAD_SHOWN characters. */
  payload: string;
  payloadTruncated: boolean;
}

/** A tag value the reader reported that matches no asset (now), as last seen. */
export interface UnknownTag {
  tagType: TagType;
  value: string;
  antenna: number | null;
  /** When it was last seen: the reader's time when trusted, else the receipt (as the ingest places reads). */
  seenAt: number;
  /** Reads of it among the messages looked at. */
  reads: number;
}

/** One refused read: why, and when its message arrived. */
export interface ReadError {
  receivedAt: Date;
  message: string;
}

export interface ReaderProblems {
  messages: ProblemMessage[];
  unknownTags: UnknownTag[];
  errors: ReadError[];
}

interface ProblemRow {
  received_at: Date;
  bad_reads: number;
  unknown_reads: number;
  errors: string[] | null;
  payload: string;
  payload_length: number;
  /** The whole payload, only for messages with unknown reads (their tags are read from it). */
  full_payload: string | null;
}

/**
 * Unknown tags of the messages, newest sighting first, one entry per tag. The payloads are
 * read again with the reader's adapter and the tags resolved as the ingest resolves them;
 * a tag attached to an asset since is no longer unknown and is left out.
 */
async function unknownTags(
  tx: Tx,
  orgId: number,
  family: ReaderFamily,
  rows: ProblemRow[],
): Promise<UnknownTag[]> {
  const seen: (UnknownTag & { key: string })[] = [];
  for (const row of rows) {
    if (row.full_payload === null) continue;
    const receivedAt = row.received_at.getTime();
    for (const read of parsePayload(family, row.full_payload).reads) {
      const tagType = read.tagType ?? 'rfid';
      seen.push({
        key: matchKey(tagType, read.tagValue),
        tagType,
        value: read.tagValue,
        antenna: read.antenna,
        seenAt: observedAt(read.readerTime, receivedAt, DEFAULT_CLOCK_POLICY),
        reads: 1,
      });
    }
  }
  const known = await assetsByTagKeys(tx, orgId, [...new Set(seen.map((s) => s.key))]);
  const byTag = new Map<string, UnknownTag>();
  for (const { key, ...tag } of seen) {
    if (known.has(key)) continue;
    const id = `${tag.tagType}:${key}`;
    const earlier = byTag.get(id);
    if (!earlier) byTag.set(id, tag);
    else {
      earlier.reads++;
      if (tag.seenAt > earlier.seenAt) Object.assign(earlier, { ...tag, reads: earlier.reads });
    }
  }
  return [...byTag.values()].sort((a, b) => b.seenAt - a.seenAt).slice(0, LATEST_SHOWN);
}

/**
 * What went wrong with a reader's reads lately, from the raw messages the ingest keeps
 * anyway: its latest messages with bad reads or unknown tags, the tags that match no
 * asset, and the refused reads with their error. Bounded: only the organization's latest
 * MESSAGES_SCANNED rows are looked through (the index is by organization and time).
 */
export async function readerProblems(tx: Tx, orgId: number, readerId: number): Promise<ReaderProblems> {
  const reader = await tx.query<{ family: ReaderFamily }>(
    'SELECT family FROM readers WHERE org_id = $1 AND id = $2',
    [orgId, readerId],
  );
  if (!reader.rows[0]) throw notFound('reader');
  const { rows } = await tx.query<ProblemRow>(
    `SELECT received_at, bad_reads, unknown_reads, errors, left(payload, $4) AS payload,
       length(payload) AS payload_length, CASE WHEN unknown_reads > 0 THEN payload END AS full_payload
     FROM (SELECT * FROM raw_messages WHERE org_id = $1 ORDER BY received_at DESC LIMIT $5) m
     WHERE reader_id = $2 AND (bad_reads > 0 OR unknown_reads > 0)
     ORDER BY received_at DESC LIMIT $3`,
    [orgId, readerId, PROBLEMS_SHOWN, PAYLOAD_SHOWN, MESSAGES_SCANNED],
  );
  return {
    messages: rows.map((r) => ({
      receivedAt: r.received_at,
      badReads: r.bad_reads,
      unknownReads: r.unknown_reads,
      errors: r.errors ?? [],
      payload: r.payload,
      payloadTruncated: r.payload_length > PAYLOAD_SHOWN,
    })),
    unknownTags: await unknownTags(tx, orgId, reader.rows[0].family, rows),
    errors: rows
      .flatMap((r) => (r.errors ?? []).map((message) => ({ receivedAt: r.received_at, message })))
      .slice(0, LATEST_SHOWN),
  };
}
