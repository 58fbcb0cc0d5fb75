import { ItemError } from './item-checks.js';
import type { AdapterResult, Read } from './types.js';

/** Beyond this many messages the rest are summarised, so hostile input cannot grow the result without bound. */
export const MAX_ERRORS = 100;

/**
 * The error list as it is kept and shown: the first MAX_ERRORS of `messages`, then one line
 * counting the rest of `total` (which may exceed the messages at hand, as AdapterResult's
 * failed does).
 */
export function listErrors(messages: readonly string[], total: number): string[] {
  const shown = messages.slice(0, MAX_ERRORS);
  if (total > shown.length) shown.push(`${total - shown.length} further errors not shown`);
  return shown;
}

/** Accumulates reads and errors for one payload; items are numbered in payload order. */
export class Collector {
  readonly reads: Read[] = [];
  private readonly errors: string[] = [];
  private failed = 0;
  private counters = new Map<string, number>();

  error(message: string): void {
    this.failed++;
    if (this.errors.length < MAX_ERRORS) this.errors.push(message);
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
    return { reads: this.reads, errors: [...this.errors], failed: this.failed };
  }
}
