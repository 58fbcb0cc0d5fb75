import { settleAll, settleInTurns } from './settle-all.js';

/**
 * Group commit: messages submitted while a transaction is running wait and are stored
 * together in the next one, so the per-transaction cost (round trips, the commit's WAL
 * flush, the per-statement overhead of set-based SQL) is paid once per batch instead of
 * once per message. Each submitter's promise settles only when the transaction holding
 * its item committed (or failed), so a transport acknowledges a message only once it is
 * durable. Under light load a message is stored at once, alone: batches form only while
 * the previous ones are busy, so batching adds no waiting of its own.
 */

/** What one batch did, for metrics (commit batch size, latency). */
export interface BatchReport {
  orgId: number;
  /** Items (messages) in the transaction. */
  items: number;
  /** Their weight (reads) in all. */
  weight: number;
  /** From the oldest item's submission to the end of the transaction. */
  oldestWaitMs: number;
  /** The transaction alone. */
  transactionMs: number;
  /** false: the transaction failed (its items were then retried in smaller batches, or failed). */
  committed: boolean;
}

export interface GroupCommitOptions<I, O> {
  /** Stores every item (all of one organization) in one transaction; one outcome per item, in order. */
  store(orgId: number, items: I[]): Promise<O[]>;
  /** The item's share of a batch's size limit (reads); 1 each when absent. */
  weight?: (item: I) => number;
  /**
   * Most items in one transaction (default 5,000). With one read per message an item is a
   * read: at 500 a group of such messages was 500 reads, and PostgreSQL's CPU per message
   * 115 us against 25 at 5,000 (docs/ingest-history.md, "Small messages in larger groups").
   */
  maxItems?: number;
  /** Most weight in one transaction (a single heavier item still goes, alone). */
  maxWeight?: number;
  /** Transactions running at once (each holds a database connection), of distinct lanes. */
  maxTransactions?: number;
  /**
   * The lane of an item within its organization (a reader: readerId % lanes). Items of one
   * lane are committed one transaction at a time, in the order they came; lanes run side
   * by side, so the database works on several groups at once. Default: one lane per
   * organization.
   */
  lane?: (item: I) => number;
  /**
   * Errors that are about the database, not the items (an outage): every item of the
   * batch fails with it, as it would alone. Any other error may be one item's fault, so
   * the batch is split and retried until the item it belongs to fails alone.
   */
  isUnavailable?: (err: unknown) => boolean;
  /** After every transaction, with the items it held. */
  onBatch?: (report: BatchReport, items: readonly I[]) => void;
}

/**
 * Who learns an item's outcome once the transaction holding it committed (`resolve`), or
 * that it failed (`reject`). Called from within the group commit: neither may throw.
 */
export interface Settle<O> {
  resolve(outcome: O): void;
  reject(err: unknown): void;
}

interface Pending<I, O> {
  orgId: number;
  /** Submission order: of the lanes free to run, the one with the oldest item goes first. */
  seq: number;
  item: I;
  weight: number;
  submittedAt: number;
  settle: Settle<O>;
}

/** One lane's items waiting, oldest first (from `head` on: taking a batch is not a shift per item). */
interface Lane<I, O> {
  key: string;
  items: Array<Pending<I, O>>;
  head: number;
  /**
   * A transaction of the lane is running. One at a time per lane: a second one would mostly
   * wait for the first's row locks (the same reader, mostly the same assets), and could
   * commit newer reads before older ones, which then take the slow path for late reads.
   */
  busy: boolean;
}

export class GroupCommit<I, O> {
  /**
   * The lanes with items waiting or a transaction running, by organization and lane. Kept
   * per lane so that a message submitted while its lane is busy costs no scan of what
   * waits: with one read per message thousands of messages wait, mostly for busy lanes.
   */
  private readonly lanes = new Map<string, Lane<I, O>>();
  private waiting = 0;
  private seq = 0;
  private running = 0;
  private readonly idleWaiters: Array<() => void> = [];
  private readonly maxItems: number;
  private readonly maxWeight: number;
  private readonly maxTransactions: number;

  constructor(private readonly options: GroupCommitOptions<I, O>) {
    this.maxItems = options.maxItems ?? 5_000;
    this.maxWeight = options.maxWeight ?? 10_000;
    this.maxTransactions = options.maxTransactions ?? 4;
    for (const [name, v] of Object.entries({
      maxItems: this.maxItems,
      maxWeight: this.maxWeight,
      maxTransactions: this.maxTransactions,
    })) {
      if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer, got ${v}`);
    }
  }

  /** Items waiting for a transaction. */
  get queued(): number {
    return this.waiting;
  }

  /** Resolves with the item's outcome once the transaction holding it committed. */
  submit(orgId: number, item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => this.enqueue(orgId, item, { resolve, reject }));
  }

  /**
   * submit() for a caller that follows many items without a promise for each (a message
   * split over lanes, IngestService): `settle` learns the item's outcome.
   */
  enqueue(orgId: number, item: I, settle: Settle<O>): void {
    const lane = this.laneAt(`${orgId}/${this.options.lane?.(item) ?? 0}`);
    lane.items.push(this.pending(orgId, item, settle));
    this.waiting++;
    if (!lane.busy) this.pump();
  }

  /**
   * Nothing waits and a transaction may start: tryAcross can only succeed then, and is
   * meant for then. With items waiting the lanes are catching up, and a transaction holding
   * several lanes for one item would hold their batches back (in a one-to-five-read backlog
   * it cost the service a tenth more CPU per read).
   */
  get quiet(): boolean {
    return this.waiting === 0 && this.running < this.maxTransactions;
  }

  /**
   * Stores `item` alone, at once, in one transaction that holds every lane of `lanes`,
   * when each of them has nothing waiting or running and a transaction may start: an item
   * that would otherwise be split over those lanes (a message whose tags fall in several)
   * then costs one transaction instead of one per lane and one more. Items submitted to
   * those lanes meanwhile wait for it, so a lane's items still commit in the order they
   * came. Returns false, having done nothing, when a lane is busy or the transactions are
   * all taken: the caller then submits the item's parts to their lanes as usual.
   */
  tryAcross(orgId: number, lanes: readonly number[], item: I, settle: Settle<O>): boolean {
    if (this.running >= this.maxTransactions) return false;
    const keys = lanes.map((l) => `${orgId}/${l}`);
    for (const key of keys) {
      const lane = this.lanes.get(key);
      if (lane && (lane.busy || lane.head < lane.items.length)) return false;
    }
    const held = keys.map((key) => this.laneAt(key));
    for (const lane of held) lane.busy = true;
    this.start([this.pending(orgId, item, settle)], held);
    return true;
  }

  /** The lane of `key` (organization/lane); made anew when absent, as idle lanes are dropped. */
  private laneAt(key: string): Lane<I, O> {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { key, items: [], head: 0, busy: false };
      this.lanes.set(key, lane);
    }
    return lane;
  }

  private pending(orgId: number, item: I, settle: Settle<O>): Pending<I, O> {
    return {
      orgId,
      seq: this.seq++,
      item,
      weight: Math.max(1, this.options.weight?.(item) ?? 1),
      submittedAt: Date.now(),
      settle,
    };
  }

  /** Resolves when nothing is queued or being stored. */
  idle(): Promise<void> {
    if (this.running === 0 && this.waiting === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.running < this.maxTransactions) {
      // Of the lanes not running, the one whose oldest item came first.
      let next: Lane<I, O> | undefined;
      for (const lane of this.lanes.values()) {
        if (lane.busy || lane.head === lane.items.length) continue;
        if (!next || lane.items[lane.head]!.seq < next.items[next.head]!.seq) next = lane;
      }
      if (!next) break;
      next.busy = true;
      this.start(this.take(next), [next]);
    }
  }

  /** Runs a batch in the lanes it holds (marked busy), then frees them and moves on. */
  private start(batch: Array<Pending<I, O>>, held: Array<Lane<I, O>>): void {
    this.running++;
    void this.run(batch).finally(() => {
      this.running--;
      for (const lane of held) {
        lane.busy = false;
        if (lane.head === lane.items.length) this.lanes.delete(lane.key);
      }
      this.pump();
      if (this.running === 0 && this.waiting === 0) {
        for (const done of this.idleWaiters.splice(0)) done();
      }
    });
  }

  /**
   * The lane's oldest items, within the limits, in order. Once one item does not fit,
   * later ones wait too: a lane's items are committed in the order they came.
   */
  private take(lane: Lane<I, O>): Array<Pending<I, O>> {
    const { items } = lane;
    let end = lane.head;
    let weight = 0;
    while (end < items.length && end - lane.head < this.maxItems) {
      const p = items[end]!;
      if (end > lane.head && weight + p.weight > this.maxWeight) break;
      weight += p.weight;
      end++;
    }
    const batch = items.slice(lane.head, end);
    lane.head = end;
    // Drop what was taken once it is most of the array, so a lane's array stays bounded
    // by what waits (copying the rest then costs no more than the items taken).
    if (lane.head === items.length) {
      items.length = 0;
      lane.head = 0;
    } else if (lane.head > 1024 && lane.head * 2 > items.length) {
      items.splice(0, lane.head);
      lane.head = 0;
    }
    this.waiting -= batch.length;
    return batch;
  }

  /**
   * Stores a batch; if it fails for a reason other than an outage, stores its halves
   * separately, down to single items, so one bad item fails alone and the rest commit.
   */
  private async run(batch: Array<Pending<I, O>>): Promise<void> {
    const orgId = batch[0]!.orgId;
    const started = Date.now();
    let outcomes: O[];
    try {
      outcomes = await this.options.store(
        orgId,
        batch.map((p) => p.item),
      );
      if (outcomes.length !== batch.length) {
        throw new Error(`store returned ${outcomes.length} outcomes for ${batch.length} items`);
      }
    } catch (err) {
      this.report(batch, started, false);
      if (batch.length === 1 || this.options.isUnavailable?.(err)) {
        settleAll(batch, (p) => p.settle.reject(err));
        return;
      }
      const half = Math.ceil(batch.length / 2);
      await this.run(batch.slice(0, half));
      await this.run(batch.slice(half));
      return;
    }
    this.report(batch, started, true);
    // In turns: the lane's next batch starts once the last item is settled, so what the
    // settled items let in still joins it, while API requests get the event loop in between.
    await settleInTurns(batch, (p, i) => p.settle.resolve(outcomes[i]!));
  }

  private report(batch: Array<Pending<I, O>>, started: number, committed: boolean): void {
    const onBatch = this.options.onBatch;
    if (!onBatch) return;
    const now = Date.now();
    try {
      onBatch(
        {
          orgId: batch[0]!.orgId,
          items: batch.length,
          weight: batch.reduce((sum, p) => sum + p.weight, 0),
          oldestWaitMs: now - Math.min(...batch.map((p) => p.submittedAt)),
          transactionMs: now - started,
          committed,
        },
        batch.map((p) => p.item),
      );
    } catch {
      // A metrics listener must never fail a batch.
    }
  }
}
