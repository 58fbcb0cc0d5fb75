import { KEYED_BATCHES } from '../db/app-connection.js';
import type { Database, Tx } from '../db/pool.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { type Sighting, storeSightings } from '../tracking/sightings.js';
import { MAX_PAYLOAD_BYTES, parsePayload } from './adapters/index.js';
import type { Read, ReaderFamily } from './adapters/types.js';
import { type BatchReport, GroupCommit, type GroupCommitOptions } from './group-commit.js';
import { type IngestInstruments, type MessageSource, NO_INSTRUMENTS } from './instruments.js';
import { type LegacyClaims, loadLegacyClaims, messageKey } from './message-digests.js';
import {
  addPlaced,
  noReads,
  type ReaderWork,
  readCount,
  StaleCounts,
  storeReaderMessages,
  type WorkOutcome,
} from './reader-batch.js';
import { type MessagePlan, planMessage } from './reader-lanes.js';
import { resolveRefs } from './record-refs.js';
import type { ScanRecord } from './records.js';
import { failsEveryTime, notPlaced } from './unplaceable.js';

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
  /**
   * readerMessage() only: the message was a redelivery of one already stored (see
   * carriesReaderTimes) and was skipped: nothing stored, nothing counted (all counts 0).
   */
  duplicate?: boolean;
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

/** How reader messages are grouped into transactions (GroupCommit's limits). */
export type GroupCommitLimits = Pick<
  GroupCommitOptions<ReaderWork, WorkOutcome>,
  'maxItems' | 'maxWeight' | 'maxTransactions'
>;

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

/**
 * Whether a reader message is one observation that a repeat of its bytes repeats (then it
 * is stored once: docs/ingest.md, "Redeliveries"): it has reads, and every read's
 * observation time is the reader's own. A read without a reader time, or with one we do
 * not trust, is placed at our receipt, so the same bytes received again are a new
 * observation (a reader reporting every second what it sees) and are stored again.
 */
export function carriesReaderTimes(reads: readonly Read[], receivedAt: number, policy: ClockPolicy): boolean {
  return (
    reads.length > 0 &&
    reads.every((r) => r.readerTime !== null && observedAt(r.readerTime, receivedAt, policy) === r.readerTime)
  );
}

/**
 * How long a message's digest is kept. A redelivery later than this carries reader times
 * (at most maxFutureSkew ahead of the first receipt) more than maxPastSkew behind its own
 * receipt: not trusted, so carriesReaderTimes is false for it and it is a new observation.
 */
export const digestWindowMs = (policy: ClockPolicy) => policy.maxPastSkewMs + policy.maxFutureSkewMs;

/**
 * Turns what readers, handhelds and import files report into stored sightings. Every
 * entry point writes the raw message and the sightings in one transaction, so a message
 * is acknowledged (by the caller) only once all of it is durable.
 */
/** A reader-message transaction, for metrics: BatchReport with its messages and reads. */
export interface IngestBatchReport extends BatchReport {
  /** Messages booked (raw log row and counters written) by the transaction. */
  messages: number;
  /** Reads it placed. */
  reads: number;
}

/** A book item's outcome, which storeReaderMessages always sets. */
const messageOutcomeOf = (w: WorkOutcome) => w.outcome!;

export class IngestService {
  private readonly batches: GroupCommit<ReaderWork, WorkOutcome>;
  private readonly batchListeners = new Set<(report: IngestBatchReport) => void>();
  private legacy: LegacyClaims | undefined;

  constructor(
    private readonly db: Database,
    private readonly clock: ClockPolicy = DEFAULT_CLOCK_POLICY,
    /** Metrics of the write path (docs/metrics.md); the transports report failures to it too. */
    readonly instruments: IngestInstruments = NO_INSTRUMENTS,
    groupCommit: GroupCommitLimits = {},
  ) {
    this.batches = new GroupCommit<ReaderWork, WorkOutcome>({
      store: (orgId, work) => this.storeBatch(orgId, work),
      // Reads, plus one for a book entry, so that a message without any still counts.
      weight: (w) => readCount(w) + (w.book ? 1 : 0),
      // By the tags' lanes (planMessage): one tag's reads stay in order, and lanes stored
      // side by side lock different assets, so both cores work.
      lane: (w) => w.lane,
      isUnavailable: isDatabaseUnavailable,
      onBatch: (report, work) => {
        let messages = 0;
        let reads = 0;
        for (const w of work) {
          if (w.book) messages++;
          reads += readCount(w);
        }
        if (report.committed) {
          this.instruments.batchCommitted({ messages, reads, seconds: report.transactionMs / 1000 });
        }
        for (const listener of this.batchListeners) listener({ ...report, messages, reads });
      },
      ...groupCommit,
    });
  }

  /**
   * One group's transaction: its COMMIT leaves behind its last statement. Counted before
   * its asset locks (storeReaderMessages); in the rare case an asset or location was
   * deleted meanwhile, once more counted after the placing.
   */
  private async storeBatch(orgId: number, work: ReaderWork[]): Promise<WorkOutcome[]> {
    const legacy = this.legacy ?? (await this.loadLegacy());
    try {
      return await this.inBatchTransaction(orgId, (tx) =>
        storeReaderMessages(tx, orgId, work, this.clock, { commit: true, legacy }),
      );
    } catch (err) {
      if (!(err instanceof StaleCounts)) throw err;
      return this.inBatchTransaction(orgId, (tx) =>
        storeReaderMessages(tx, orgId, work, this.clock, { countFirst: false, commit: true, legacy }),
      );
    }
  }

  /** The claims made before migration 0057 (claimDigests), read once they are first needed. */
  private async loadLegacy(): Promise<LegacyClaims> {
    const legacy = await this.db.system((tx) => loadLegacyClaims(tx, this.clock.maxFutureSkewMs));
    this.legacy = legacy;
    return legacy;
  }

  /** An ingest transaction: its batches of keys planned as index probes (KEYED_BATCHES). */
  private inBatchTransaction<T>(orgId: number, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.withOrg(orgId, (tx) => {
      // Sent without waiting (the pool pipelines), so it runs before the batch's statements;
      // were it to fail, they would fail with it.
      tx.query(KEYED_BATCHES).catch(() => undefined);
      return fn(tx);
    });
  }

  /** Stores a planned message (planMessage): its outcome once its book entry committed. */
  private storePlanned(orgId: number, plan: MessagePlan): Promise<IngestOutcome> {
    // A chain for the usual case: one frame fewer for every one-read message.
    if ('whole' in plan) {
      const { whole } = plan;
      return this.batches.submit(orgId, whole).then(messageOutcomeOf, (err: unknown) => {
        // The group commit fails a message alone only once it fails alone (or in an outage).
        if (!failsEveryTime(err)) throw err;
        const unplaced = { ...whole, reads: [], placed: notPlaced(readCount(whole), err) };
        return this.batches.submit(orgId, unplaced).then(messageOutcomeOf);
      });
    }
    return this.storeInParts(orgId, plan);
  }

  /**
   * A message split over lanes: its parts, then, once they have all committed, its book
   * entry. A part that fails every time (failsEveryTime) counts its reads as not placed.
   */
  private async storeInParts(
    orgId: number,
    plan: { parts: ReaderWork[]; book: ReaderWork },
  ): Promise<IngestOutcome> {
    const parts = await Promise.all(
      plan.parts.map((part) =>
        this.batches.submit(orgId, part).catch((err: unknown) => {
          if (!failsEveryTime(err)) throw err;
          return { placed: notPlaced(readCount(part), err) };
        }),
      ),
    );
    const placed = parts.reduce((sum, p) => addPlaced(sum, p.placed), noReads());
    return messageOutcomeOf(await this.batches.submit(orgId, { ...plan.book, placed }));
  }

  /**
   * Runs one message's transaction and reports it once committed: the transaction as a
   * batch of one, the message with its wait from receipt to commit.
   */
  private async committed(
    orgId: number,
    family: string,
    source: MessageSource,
    receivedAt: number,
    store: (tx: Tx) => Promise<IngestOutcome>,
  ): Promise<IngestOutcome> {
    const started = performance.now();
    const outcome = await this.inBatchTransaction(orgId, store);
    const committedAt = Date.now();
    const reads = outcome.good + outcome.bad + outcome.unknown;
    this.instruments.batchCommitted({ messages: 1, reads, seconds: (performance.now() - started) / 1000 });
    this.instruments.messageStored({
      family,
      source,
      good: outcome.good,
      bad: outcome.bad,
      unknown: outcome.unknown,
      receivedAt,
      committedAt,
    });
    return outcome;
  }

  /**
   * Stores one reader message (raw log, sightings, the reader's counters) and resolves once
   * it is committed. Messages arriving while others are being stored are committed together
   * (group commit, below): the caller still learns only of its own message, after its commit.
   */
  readerMessage(
    reader: ReaderRef,
    payload: Buffer | string,
    source: 'mqtt' | 'webhook',
    receivedAt = Date.now(),
  ): Promise<IngestOutcome> {
    // Parsed before queueing: the adapters never throw, and a bad payload is an outcome, not an error.
    let submitted: Promise<IngestOutcome>;
    try {
      const parsed = parsePayload(reader.family, payload);
      const once = carriesReaderTimes(parsed.reads, receivedAt, this.clock);
      submitted = this.storePlanned(
        reader.orgId,
        planMessage({
          reader,
          payload,
          parsed,
          source,
          receivedAt,
          key: once ? messageKey(payload, parsed.reads) : null,
        }),
      );
    } catch (err) {
      return Promise.reject(err);
    }
    return submitted.then((outcome) => {
      this.instruments.messageStored({
        family: reader.family,
        source,
        good: outcome.good,
        bad: outcome.bad,
        unknown: outcome.unknown,
        receivedAt,
        committedAt: Date.now(),
        duplicate: outcome.duplicate === true,
      });
      return outcome;
    });
  }

  /** Calls `listener` after every reader-message transaction (batch size and latency). */
  onBatch(listener: (report: IngestBatchReport) => void): () => void {
    this.batchListeners.add(listener);
    return () => this.batchListeners.delete(listener);
  }

  /** Resolves when no reader message is waiting or being stored. */
  settled(): Promise<void> {
    return this.batches.idle();
  }

  /** Handheld submissions and imported records, already parsed (parseScanRecord). */
  async records(
    orgId: number,
    records: ScanRecord[],
    source: 'handheld' | 'import',
    raw: string,
    receivedAt = Date.now(),
  ): Promise<IngestOutcome> {
    return this.committed(orgId, source, source, receivedAt, async (tx) => {
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
          sightings.push({ assetId, locationId, at: r.observedAt, source: { type: source } });
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
