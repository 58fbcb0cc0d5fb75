import { errorCode } from '../db/error-code.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import type { PlacedReads } from './reader-batch.js';

/**
 * SQLSTATE classes of errors that a redelivery of the same message would meet again, as
 * they depend on the message: data exceptions (22), integrity constraint violations (23),
 * errors raised by a trigger or function (P0) and internal errors (XX). Others may pass on
 * another attempt: a deadlock, a serialization failure, a statement timeout, an outage,
 * and also a schema or privilege the service does not find (42: an instance older than
 * the database's migrations during an upgrade, a grant taken away), which an operator
 * puts right.
 */
const EVERY_TIME = /^(22|23|P0|XX)[0-9A-Z]{3}$/;

/**
 * Whether storing a message's reads failed in a way its every redelivery would repeat: a
 * database error of those classes, or a programming error (TypeError, RangeError). Such a
 * message is not refused, which would have the reader send it again and again, and hold
 * up every message behind it, but booked without its reads (notPlaced): its raw log row
 * keeps its payload and says why, the reader's counters count its reads bad.
 */
export function failsEveryTime(err: unknown): boolean {
  if (isDatabaseUnavailable(err)) return false;
  if (err instanceof TypeError || err instanceof RangeError) return true;
  const code = errorCode(err);
  return code !== undefined && EVERY_TIME.test(code);
}

/** What `reads` reads that could not be placed come to: bad, with the reason once. */
export function notPlaced(reads: number, err: unknown): PlacedReads {
  const code = errorCode(err);
  const message = err instanceof Error ? err.message : String(err);
  const reason = `${code === undefined ? '' : `${code} `}${message}`.slice(0, 200);
  return {
    good: 0,
    bad: reads,
    unknown: 0,
    errors: [{ read: 0, text: `${reads} read(s) not placed: ${reason}` }],
  };
}
