import { KEYED_BATCHES } from '../db/app-connection.js';
import type { Database, Tx } from '../db/pool.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { type Sighting, storeSightings } from '../tracking/sightings.js';
import { parsePayload } from './adapters/index.js';
import { type ClockPolicy, carriesReaderTimes, DEFAULT_CLOCK_POLICY } from './clock-policy.js';
import type { ReaderRef } from './directory.js';
import { type BatchReport, GroupCommit, type GroupCommitOptions, type Settle } from './group-commit.js';
import { type IngestInstruments, type MessageSource, NO_INSTRUMENTS } from './instruments.js';
import { type LegacyClaims, loadLegacyClaims, messageKey } from './message-digests.js';
import { AcrossLanes, OutcomeOf, WholeMessage } from './message-settles.js';
import type { IngestOutcome } from './outcome.js';
import { logMessages, logRecords } from './raw-log.js';
import {
  type PlacedReads,
  type ReaderWork,
  readCount,
  StaleCounts,
  storeReaderMessages,
  type WorkOutcome,
} from './reader-batch.js';
import { bumpReaderCounters, messageCounts } from './reader-counters.js';
import { type MessagePlan, planMessage, type SplitPlan } from './reader-lanes.js';
import { resolveRefs } from './record-refs.js';
import type { ScanRecord } from './records.js';
import { PartsTally } from './split-message.js';

/** How reader messages are grouped into transactions (GroupCommit's limits). */
export type GroupCommitLimits = Pick<
  GroupCommitOptions<ReaderWork, WorkOutcome>,
  'maxItems' | 'maxWeight' | 'maxTransactions'
> & {
  /**
   * A message whose tags fall in several lanes is stored whole, in one transaction holding
   * them all, when they are all idle (GroupCommit.tryAcross); else in parts (default true;
   * false: always in parts, for the tests of that path).
   */
  acrossIdleLanes?: boolean;
};

/** A reader-message transaction, for metrics: BatchReport with its messages and reads. */
export interface IngestBatchReport extends BatchReport {
  /** Messages booked (raw log row and counters written) by the transaction. */
  messages: number;
  /** Reads it placed. */
  reads: number;
}

/**
 * Turns what readers, handhelds and import files report into stored sightings. Every
 * entry point writes the raw message and the sightings in one transaction, so a message
 * is acknowledged (by the caller) only once all of it is durable.
 */
export class IngestService {
  private readonly batches: GroupCommit<ReaderWork, WorkOutcome>;
  private readonly batchListeners = new Set<(report: IngestBatchReport) => void>();
  private legacy: LegacyClaims | undefined;
  private readonly acrossIdleLanes: boolean;

  constructor(
    private readonly db: Database,
    private readonly clock: ClockPolicy = DEFAULT_CLOCK_POLICY,
    /** Metrics of the write path (docs/metrics.md); the transports report failures to it too. */
    readonly instruments: IngestInstruments = NO_INSTRUMENTS,
    { acrossIdleLanes = true, ...groupCommit }: GroupCommitLimits = {},
  ) {
    this.acrossIdleLanes = acrossIdleLanes;
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
    let results: WorkOutcome[];
    try {
      results = await this.inBatchTransaction(orgId, (tx) =>
        storeReaderMessages(tx, orgId, work, this.clock, { commit: true, legacy }),
      );
    } catch (err) {
      if (!(err instanceof StaleCounts)) throw err;
      results = await this.inBatchTransaction(orgId, (tx) =>
        storeReaderMessages(tx, orgId, work, this.clock, { countFirst: false, commit: true, legacy }),
      );
    }
    this.reportBooked(work, results);
    return results;
  }

  /**
   * The metrics of the messages a committed batch booked, a message's outcome being its
   * book item's: reported here for the batch, not by an object per message waiting for
   * its commit.
   */
  private reportBooked(work: ReaderWork[], results: WorkOutcome[]): void {
    const committedAt = Date.now();
    for (let i = 0; i < work.length; i++) {
      const { book, message: m } = work[i]!;
      const outcome = results[i]!.outcome;
      if (!book || outcome === undefined) continue;
      try {
        this.instruments.messageStored({
          family: m.reader.family,
          source: m.source,
          good: outcome.good,
          bad: outcome.bad,
          unknown: outcome.unknown,
          receivedAt: m.receivedAt,
          committedAt,
          duplicate: outcome.duplicate === true,
        });
      } catch {
        // A metrics failure is not the message's.
      }
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

  /**
   * Stores a planned message (planMessage); `settle` learns its outcome once its book entry
   * committed. The group commit fails a message alone only once it fails alone (or in an
   * outage); a whole message that fails in a way its redelivery would repeat
   * (failsEveryTime) is booked without its reads, which count as not placed.
   */
  private storePlanned(orgId: number, plan: MessagePlan, settle: Settle<IngestOutcome>): void {
    if ('whole' in plan)
      this.batches.enqueue(orgId, plan.whole, new WholeMessage(this.batches, orgId, plan.whole, settle));
    else if (!this.acrossIdleLanes || !this.storeAcross(orgId, plan, settle))
      this.storeInParts(orgId, plan, settle);
  }

  /**
   * A message split over lanes, stored whole in one transaction when all its lanes (and its
   * reader's, where its book entry goes) are idle: under a steady load that keeps no queue,
   * a message of twenty reads cost four parts' transactions and the book's, each waiting
   * for its WAL flush, where one does (docs/ingest.md, "Group commit"). A failure its
   * redelivery would repeat sends it down the parts' path (AcrossLanes), so that only the
   * reads of the failing lane are left out, as when it was split from the start.
   */
  private storeAcross(orgId: number, plan: SplitPlan, settle: Settle<IngestOutcome>): boolean {
    // Under a backlog items wait: nothing to build for a try that is not meant for it.
    if (!this.batches.quiet) return false;
    const { message, keys, lane } = plan.book;
    const lanes = new Set<number>([lane]);
    for (const part of plan.parts) lanes.add(part.lane);
    const whole: ReaderWork = { message, keys, lane, reads: null, book: true };
    return this.batches.tryAcross(orgId, [...lanes], whole, new AcrossLanes(this, orgId, plan, settle));
  }

  /**
   * A message split over lanes: its parts, then, once they have all committed, its book
   * entry. A part that fails every time (failsEveryTime) counts its reads as not placed
   * (PartsTally, which follows the parts without a promise for each).
   */
  storeInParts(orgId: number, plan: SplitPlan, settle: Settle<IngestOutcome>): void {
    const { message, keys, lane, reads } = plan.book;
    const book = (placed: PlacedReads) =>
      this.batches.enqueue(orgId, { message, keys, lane, reads, book: true, placed }, new OutcomeOf(settle));
    const tally = new PartsTally(plan.parts, book, (err) => settle.reject(err));
    for (let i = 0; i < plan.parts.length; i++)
      this.batches.enqueue(orgId, plan.parts[i]!, tally.settleOf(i));
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
    return new Promise<IngestOutcome>((resolve, reject) =>
      this.takeReaderMessage(reader, payload, source, receivedAt, { resolve, reject }),
    );
  }

  /**
   * readerMessage without a promise, for a transport following thousands of waiting
   * messages (the embedded broker): `settle` learns the outcome once the message committed.
   * A promise and its reactions per message were objects the collector copied while the
   * message waited for its commit (docs/ingest-history.md, "What a waiting message is made
   * of").
   */
  takeReaderMessage(
    reader: ReaderRef,
    payload: Buffer | string,
    source: 'mqtt' | 'webhook',
    receivedAt: number,
    settle: Settle<IngestOutcome>,
  ): void {
    // Parsed before queueing: the adapters never throw, and a bad payload is an outcome, not an error.
    let plan: MessagePlan;
    try {
      const parsed = parsePayload(reader.family, payload);
      const once = carriesReaderTimes(parsed.reads, receivedAt, this.clock);
      plan = planMessage({
        reader,
        payload,
        parsed,
        source,
        receivedAt,
        key: once ? messageKey(payload, parsed.reads) : null,
      });
    } catch (err) {
      settle.reject(err);
      return;
    }
    this.storePlanned(reader.orgId, plan, settle);
  }

  /**
   * A reader's message refused before it could be read (a webhook body or an MQTT packet
   * over the size limit): a raw log row with the reason and nothing of the payload, counted
   * as one bad read, so the reader's health and its problems show why the reader gets no
   * acknowledgement, where it would otherwise look silent or reconnecting for no reason.
   */
  async refusedMessage(
    reader: ReaderRef,
    source: 'mqtt' | 'webhook',
    receivedAt: number,
    reason: string,
  ): Promise<void> {
    const outcome: IngestOutcome = { good: 0, bad: 1, unknown: 0, errors: [reason] };
    await this.committed(reader.orgId, reader.family, source, receivedAt, async (tx) => {
      await logMessages(tx, reader.orgId, [{ reader, payload: '', source, receivedAt }], [outcome]);
      await bumpReaderCounters(tx, reader.orgId, [messageCounts(reader.id, receivedAt, outcome)]);
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
        // A location that does not exist is the sender's mistake whatever the asset, so it is
        // refused before an unknown asset is counted (an import with a mistyped location key
        // must exit 3, even on lines whose tags nobody carries).
        if (locationId === undefined) {
          outcome.bad++;
          outcome.errors.push(`record ${i + 1}: location not found`);
          outcome.rejected!.push({ index: i, reason: 'location not found' });
        } else if (assetId === undefined) {
          outcome.unknown++;
          outcome.unknownIndexes!.push(i);
        } else {
          sightings.push({ assetId, locationId, at: r.observedAt, source: { type: source } });
        }
      });
      outcome.good = await storeSightings(tx, orgId, sightings);
      await logRecords(tx, orgId, source, raw, receivedAt, outcome);
      return outcome;
    });
  }
}
