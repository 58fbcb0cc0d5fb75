import type { Settle } from './group-commit.js';
import {
  addPlaced,
  noReads,
  type PlacedReads,
  type ReaderWork,
  readCount,
  type WorkOutcome,
} from './reader-batch.js';
import { failsEveryTime, notPlaced } from './unplaceable.js';

/**
 * Follows the parts of a message split over lanes (planMessage) as the group commit settles
 * them: once every part has committed, `done` gets what they placed, summed in part order;
 * a part that failed in a way its redelivery would repeat (failsEveryTime) counts its reads
 * as not placed. Any other failure refuses the message: `fail`, once, and nothing after.
 *
 * One object for the message and a small one per part, where a promise per part, its
 * handler and Promise.all were 2.8 kB of allocation for every message of two reads split
 * over two lanes (docs/ingest-history.md, "Split messages without a promise per part").
 */
export class PartsTally {
  private readonly placed: Array<PlacedReads | undefined>;
  private remaining: number;
  private failed = false;

  constructor(
    private readonly parts: readonly ReaderWork[],
    private readonly done: (placed: PlacedReads) => void,
    private readonly fail: (err: unknown) => void,
  ) {
    this.placed = new Array(parts.length);
    this.remaining = parts.length;
    if (parts.length === 0) done(noReads());
  }

  /** The group commit's Settle for part `index`. */
  settleOf(index: number): Settle<WorkOutcome> {
    return new PartSettle(this, index);
  }

  partPlaced(index: number, placed: PlacedReads): void {
    if (this.failed || this.placed[index] !== undefined) return;
    this.placed[index] = placed;
    if (--this.remaining > 0) return;
    const sum = noReads();
    for (const p of this.placed) addPlaced(sum, p!);
    this.done(sum);
  }

  partFailed(index: number, err: unknown): void {
    if (this.failed) return;
    if (failsEveryTime(err)) {
      this.partPlaced(index, notPlaced(readCount(this.parts[index]!), err));
      return;
    }
    this.failed = true;
    this.fail(err);
  }
}

class PartSettle implements Settle<WorkOutcome> {
  constructor(
    private readonly tally: PartsTally,
    private readonly index: number,
  ) {}

  resolve(outcome: WorkOutcome): void {
    this.tally.partPlaced(this.index, outcome.placed);
  }

  reject(err: unknown): void {
    this.tally.partFailed(this.index, err);
  }
}
