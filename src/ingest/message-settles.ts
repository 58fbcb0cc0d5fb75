import type { GroupCommit, Settle } from './group-commit.js';
import type { IngestOutcome } from './outcome.js';
import { type ReaderWork, readCount, type WorkOutcome } from './reader-batch.js';
import type { SplitPlan } from './reader-lanes.js';
import { failsEveryTime, notPlaced } from './unplaceable.js';

/**
 * What the group commit tells a reader message waiting in its lane. Each is one object
 * holding what it needs, not closures over the caller's frame: a message waits for its
 * commit long enough to survive the collector's scavenges, and every object it keeps alive
 * is copied there (docs/ingest-history.md, "The collector's pauses, and what they are
 * made of").
 */

/** The Settle of a book item: its message's outcome to `settle`. */
export class OutcomeOf implements Settle<WorkOutcome> {
  constructor(protected readonly settle: Settle<IngestOutcome>) {}

  resolve(w: WorkOutcome): void {
    // A book item's outcome, which storeReaderMessages always sets.
    this.settle.resolve(w.outcome!);
  }

  reject(err: unknown): void {
    this.settle.reject(err);
  }
}

/**
 * The Settle of a message stored whole: a failure its redelivery would repeat
 * (failsEveryTime) books the message without its reads, which count as not placed.
 */
export class WholeMessage extends OutcomeOf {
  constructor(
    private readonly batches: GroupCommit<ReaderWork, WorkOutcome>,
    private readonly orgId: number,
    private readonly whole: ReaderWork,
    settle: Settle<IngestOutcome>,
  ) {
    super(settle);
  }

  override reject(err: unknown): void {
    if (!failsEveryTime(err)) {
      this.settle.reject(err);
      return;
    }
    const { message, keys, lane } = this.whole;
    const placed = notPlaced(readCount(this.whole), err);
    this.batches.enqueue(
      this.orgId,
      { message, keys, lane, reads: [], book: true, placed },
      new OutcomeOf(this.settle),
    );
  }
}

/** Stores a message split over lanes in parts, then its book entry (IngestService). */
export interface PartsStore {
  storeInParts(orgId: number, plan: SplitPlan, settle: Settle<IngestOutcome>): void;
}

/**
 * The Settle of a message stored whole across its lanes (GroupCommit.tryAcross): a failure
 * its redelivery would repeat stores it in parts instead, where only the failing lane's
 * reads are left out; any other failure refuses it, as it would its parts.
 */
export class AcrossLanes extends OutcomeOf {
  constructor(
    private readonly store: PartsStore,
    private readonly orgId: number,
    private readonly plan: SplitPlan,
    settle: Settle<IngestOutcome>,
  ) {
    super(settle);
  }

  override reject(err: unknown): void {
    if (failsEveryTime(err)) this.store.storeInParts(this.orgId, this.plan, this.settle);
    else this.settle.reject(err);
  }
}
