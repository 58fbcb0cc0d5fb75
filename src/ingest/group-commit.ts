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
  /** Most items in one transaction. */
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
  onBatch?: (report: BatchReport) => void;
}

interface Pending<I, O> {
  orgId: number;
  /** Organization and lane: items of one key go in one transaction at a time. */
  key: string;
  item: I;
  weight: number;
  submittedAt: number;
  resolve: (outcome: O) => void;
  reject: (err: unknown) => void;
}

export class GroupCommit<I, O> {
  private readonly queue: Array<Pending<I, O>> = [];
  private running = 0;
  /**
   * Lanes with a transaction running. One at a time per lane: a second one would mostly
   * wait for the first's row locks (the same reader, mostly the same assets), and could
   * commit newer reads before older ones, which then take the slow path for late reads.
   */
  private readonly busy = new Set<string>();
  private readonly idleWaiters: Array<() => void> = [];
  private readonly maxItems: number;
  private readonly maxWeight: number;
  private readonly maxTransactions: number;

  constructor(private readonly options: GroupCommitOptions<I, O>) {
    this.maxItems = options.maxItems ?? 500;
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
    return this.queue.length;
  }

  /** Resolves with the item's outcome once the transaction holding it committed. */
  submit(orgId: number, item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({
        orgId,
        key: `${orgId}/${this.options.lane?.(item) ?? 0}`,
        item,
        weight: Math.max(1, this.options.weight?.(item) ?? 1),
        submittedAt: Date.now(),
        resolve,
        reject,
      });
      this.pump();
    });
  }

  /** Resolves when nothing is queued or being stored. */
  idle(): Promise<void> {
    if (this.running === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.running < this.maxTransactions) {
      const head = this.queue.find((p) => !this.busy.has(p.key));
      if (!head) break;
      const batch = this.take(head.key);
      this.running++;
      this.busy.add(head.key);
      void this.run(batch).finally(() => {
        this.running--;
        this.busy.delete(head.key);
        this.pump();
        if (this.running === 0 && this.queue.length === 0) {
          for (const done of this.idleWaiters.splice(0)) done();
        }
      });
    }
  }

  /** The lane's oldest items, within the limits, in order. */
  private take(key: string): Array<Pending<I, O>> {
    const batch: Array<Pending<I, O>> = [];
    let weight = 0;
    let kept = 0;
    // Once one item of the lane does not fit, later ones wait too: a lane's items are
    // committed in the order they came.
    let full = false;
    for (let i = 0; i < this.queue.length; i++) {
      const p = this.queue[i]!;
      if (!full && p.key === key) {
        full = batch.length >= this.maxItems || (batch.length > 0 && weight + p.weight > this.maxWeight);
      }
      if (!full && p.key === key) {
        batch.push(p);
        weight += p.weight;
      } else {
        this.queue[kept++] = p;
      }
    }
    this.queue.length = kept;
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
        for (const p of batch) p.reject(err);
        return;
      }
      const half = Math.ceil(batch.length / 2);
      await this.run(batch.slice(0, half));
      await this.run(batch.slice(half));
      return;
    }
    this.report(batch, started, true);
    for (const [i, p] of batch.entries()) p.resolve(outcomes[i]!);
  }

  private report(batch: Array<Pending<I, O>>, started: number, committed: boolean): void {
    const onBatch = this.options.onBatch;
    if (!onBatch) return;
    const now = Date.now();
    try {
      onBatch({
        orgId: batch[0]!.orgId,
        items: batch.length,
        weight: batch.reduce((sum, p) => sum + p.weight, 0),
        oldestWaitMs: now - Math.min(...batch.map((p) => p.submittedAt)),
        transactionMs: now - started,
        committed,
      });
    } catch {
      // A metrics listener must never fail a batch.
    }
  }
}
