import type { Database, Tx } from '../db/pool.js';
import { assetsByTagKeys, locationsByTagKeys, matchKey, scanPointsOf } from '../tracking/resolve.js';
import { type Sighting, storeSightings } from '../tracking/sightings.js';
import { MAX_PAYLOAD_BYTES, parsePayload } from './adapters/index.js';
import type { ReaderFamily } from './adapters/types.js';
import type { ScanRecord } from './records.js';

export interface IngestOutcome {
  /** Reads resolved to an asset and a location and stored. */
  good: number;
  /** Malformed items, and reads without a scan point for their antenna. */
  bad: number;
  /** Reads of tags (or asset references) that match no asset. */
  unknown: number;
  errors: string[];
  /** records() only: the records refused after parsing (0-based index in the batch), with the reason. */
  rejected?: Array<{ index: number; reason: string }>;
  /** records() only: the records (0-based index in the batch) that matched no asset, so callers can name them. */
  unknownIndexes?: number[];
}

export interface ReaderRef {
  id: number;
  orgId: number;
  family: ReaderFamily;
}

export interface ClockPolicy {
  /** A reader clock further ahead of our receipt than this is not trusted. */
  maxFutureSkewMs: number;
  /** Nor one further behind (store-and-forward readers may lag, but not this much). */
  maxPastSkewMs: number;
}

export const DEFAULT_CLOCK_POLICY: ClockPolicy = {
  maxFutureSkewMs: 5 * 60_000,
  maxPastSkewMs: 7 * 24 * 3600_000,
};

/** The reader's time when present and plausible, otherwise the time we received it. */
export function observedAt(readerTime: number | null, receivedAt: number, policy: ClockPolicy): number {
  if (readerTime === null) return receivedAt;
  if (readerTime > receivedAt + policy.maxFutureSkewMs) return receivedAt;
  if (readerTime < receivedAt - policy.maxPastSkewMs) return receivedAt;
  return readerTime;
}

/** Both spellings a bare tag value may be stored under: normalised RFID/BLE, or a barcode. */
const tagKeys = (value: string) => [...new Set([matchKey('rfid', value), value])];

/**
 * Turns what readers, handhelds and import files report into stored sightings. Every
 * entry point writes the raw message and the sightings in one transaction, so a message
 * is acknowledged (by the caller) only once all of it is durable.
 */
export class IngestService {
  constructor(
    private readonly db: Database,
    private readonly clock: ClockPolicy = DEFAULT_CLOCK_POLICY,
  ) {}

  async readerMessage(
    reader: ReaderRef,
    payload: Buffer | string,
    source: 'mqtt' | 'webhook',
    receivedAt = Date.now(),
  ): Promise<IngestOutcome> {
    const parsed = parsePayload(reader.family, payload);
    return this.db.withOrg(reader.orgId, async (tx) => {
      const points = await scanPointsOf(tx, reader.orgId, reader.id);
      const keys = parsed.reads.map((r) => matchKey(r.tagType ?? 'rfid', r.tagValue));
      const assets = await assetsByTagKeys(tx, reader.orgId, keys);
      const outcome: IngestOutcome = {
        good: 0,
        bad: parsed.errors.length,
        unknown: 0,
        errors: [...parsed.errors],
      };
      const sightings: Sighting[] = [];
      parsed.reads.forEach((read, i) => {
        const assetId = assets.get(keys[i]!);
        const locationId = points.get(read.antenna) ?? points.get(null);
        if (assetId === undefined) outcome.unknown++;
        else if (locationId === undefined) {
          outcome.bad++;
          outcome.errors.push(`no scan point for antenna ${read.antenna ?? '(none)'}`);
        } else {
          sightings.push({ assetId, locationId, at: observedAt(read.readerTime, receivedAt, this.clock) });
        }
      });
      outcome.good = await storeSightings(tx, reader.orgId, sightings);
      await this.logMessage(tx, reader.orgId, reader.id, source, payload, receivedAt, outcome);
      await tx.query(
        `UPDATE readers SET last_message_at = greatest(last_message_at, $3), good_reads = good_reads + $4,
           bad_reads = bad_reads + $5, unknown_reads = unknown_reads + $6
         WHERE org_id = $1 AND id = $2`,
        [reader.orgId, reader.id, new Date(receivedAt), outcome.good, outcome.bad, outcome.unknown],
      );
      return outcome;
    });
  }

  /** Handheld submissions and imported records, already parsed (parseScanRecord). */
  async records(
    orgId: number,
    records: ScanRecord[],
    source: 'handheld' | 'import',
    raw: string,
    receivedAt = Date.now(),
  ): Promise<IngestOutcome> {
    return this.db.withOrg(orgId, async (tx) => {
      const assets = await resolveRefs(
        'assets',
        tx,
        orgId,
        records.map((r) => r.asset),
      );
      const locations = await resolveRefs(
        'locations',
        tx,
        orgId,
        records.map((r) => r.location),
      );
      const outcome: IngestOutcome = {
        good: 0,
        bad: 0,
        unknown: 0,
        errors: [],
        rejected: [],
        unknownIndexes: [],
      };
      const sightings: Sighting[] = [];
      records.forEach((r, i) => {
        const assetId = assets[i];
        const locationId = locations[i];
        if (assetId === undefined) {
          outcome.unknown++;
          outcome.unknownIndexes!.push(i);
        } else if (locationId === undefined) {
          outcome.bad++;
          outcome.errors.push(`record ${i + 1}: location not found`);
          outcome.rejected!.push({ index: i, reason: 'location not found' });
        } else {
          sightings.push({ assetId, locationId, at: r.observedAt });
        }
      });
      outcome.good = await storeSightings(tx, orgId, sightings);
      await this.logMessage(tx, orgId, null, source, raw, receivedAt, outcome);
      return outcome;
    });
  }

  private async logMessage(
    tx: Tx,
    orgId: number,
    readerId: number | null,
    source: string,
    payload: Buffer | string,
    receivedAt: number,
    outcome: IngestOutcome,
  ): Promise<void> {
    await tx.query(
      `INSERT INTO raw_messages (received_at, org_id, reader_id, source, payload, good_reads, bad_reads, unknown_reads, errors)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        new Date(receivedAt),
        orgId,
        readerId,
        source,
        storableText(payload),
        outcome.good,
        outcome.bad,
        outcome.unknown,
        outcome.errors.length ? outcome.errors.slice(0, 100).map(storableText) : null,
      ],
    );
  }
}

/**
 * A payload or message as PostgreSQL can store it in text: NUL is not allowed there (a
 * payload carrying one would fail its transaction on every delivery), and a payload is
 * kept up to the adapters' size limit, with a note when it was cut.
 */
export function storableText(value: Buffer | string): string {
  const size = typeof value === 'string' ? value.length : value.byteLength;
  let text =
    typeof value === 'string'
      ? value.slice(0, MAX_PAYLOAD_BYTES)
      : value.subarray(0, MAX_PAYLOAD_BYTES).toString('utf8');
  if (size > MAX_PAYLOAD_BYTES) text += `\n[truncated: ${size} in all, ${MAX_PAYLOAD_BYTES} kept]`;
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

async function liveIds(
  tx: Tx,
  table: 'assets' | 'locations',
  orgId: number,
  ids: number[],
): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const { rows } = await tx.query<{ id: number }>(
    `SELECT id FROM ${table} WHERE org_id = $1 AND id = ANY($2::bigint[]) AND deleted_at IS NULL`,
    [orgId, ids],
  );
  return new Set(rows.map((r) => r.id));
}

async function liveKeys(tx: Tx, table: 'assets' | 'locations', orgId: number, keys: string[]) {
  if (keys.length === 0) return new Map<string, number>();
  const { rows } = await tx.query<{ id: number; external_key: string }>(
    `SELECT id, external_key FROM ${table} WHERE org_id = $1 AND external_key = ANY($2::text[]) AND deleted_at IS NULL`,
    [orgId, keys],
  );
  return new Map(rows.map((r) => [r.external_key, r.id]));
}

type Ref = ScanRecord['asset'];

/**
 * Resolves references by id, external key or tag value to live rows of one table, in
 * three queries whatever the number of references; undefined where nothing matches.
 */
async function resolveRefs(
  table: 'assets' | 'locations',
  tx: Tx,
  orgId: number,
  refs: Ref[],
): Promise<(number | undefined)[]> {
  const ids = refs.flatMap((r) => ('id' in r ? [r.id] : []));
  const keys = refs.flatMap((r) => ('externalKey' in r ? [r.externalKey] : []));
  const tags = refs.flatMap((r) => ('tag' in r ? tagKeys(r.tag) : []));
  const byTagKeys = table === 'assets' ? assetsByTagKeys : locationsByTagKeys;
  const byId = await liveIds(tx, table, orgId, ids);
  const byKey = await liveKeys(tx, table, orgId, keys);
  const byTag = await byTagKeys(tx, orgId, tags);
  return refs.map((r) => {
    if ('id' in r) return byId.has(r.id) ? r.id : undefined;
    if ('externalKey' in r) return byKey.get(r.externalKey);
    return tagKeys(r.tag)
      .map((k) => byTag.get(k))
      .find((v) => v !== undefined);
  });
}
