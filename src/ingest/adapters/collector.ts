import { ItemError } from './item-checks.js';
import type { AdapterResult, Read } from './types.js';

/** Beyond this many messages the rest are summarised, so hostile input cannot grow the result without bound. */
export const MAX_ERRORS = 100;

/** Accumulates reads and errors for one payload; items are numbered in payload order. */
export class Collector {
  readonly reads: Read[] = [];
  private readonly errors: string[] = [];
  private suppressed = 0;
  private counters = new Map<string, number>();

  error(message: string): void {
    if (this.errors.length < MAX_ERRORS) this.errors.push(message);
    else this.suppressed++;
  }

  /**
   * Runs one item's handler. An ItemError (or anything else it throws) becomes a single message
   * prefixed with the item's label and ordinal ("event 3: ..."); the next item is unaffected.
   */
  item(label: string, handler: () => void): void {
    const n = (this.counters.get(label) ?? 0) + 1;
    this.counters.set(label, n);
    try {
      handler();
    } catch (err) {
      const message = err instanceof ItemError ? err.message : `unexpected error: ${String(err)}`;
      this.error(`${label} ${n}: ${message}`);
    }
  }

  result(): AdapterResult {
    const errors = [...this.errors];
    if (this.suppressed > 0) errors.push(`${this.suppressed} further errors not shown`);
    return { reads: this.reads, errors };
  }
}
