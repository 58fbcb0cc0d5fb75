import { rfc3339Instant } from '../../http/timestamps.js';
import { fail, show } from './item-checks.js';

/** Also what readers write and the API refuses: a space for the T, any number of fraction digits, "+0000". */
const READER_RFC3339 =
  /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?(?:([Zz])|([+-]\d{2}):?(\d{2}))$/;

/**
 * Epoch milliseconds of an RFC 3339 timestamp, or null when the text is not one. The offset may be
 * written with or without its colon (Zebra writes "+0000"); fractional seconds may have any number of
 * digits and are truncated to the millisecond (Impinj writes nanoseconds). The text is rewritten
 * into the API's strict form so that one parser decides what a valid instant is.
 */
export function parseRfc3339(text: string): number | null {
  const m = READER_RFC3339.exec(text.trim());
  if (!m) return null;
  const [, date, time, fraction, zulu, offsetHours, offsetMinutes] = m;
  // Digits past the ninth cannot reach the millisecond, and the strict form allows only nine.
  const strictFraction = fraction === undefined ? '' : `.${fraction.slice(0, 9)}`;
  const strictOffset = zulu ?? `${offsetHours}:${offsetMinutes}`;
  return rfc3339Instant(`${date}T${time}${strictFraction}${strictOffset}`, { leapSecond: true });
}

/** An RFC 3339 time field; absent or null is null, anything unparseable fails the item. */
export function timeField(raw: unknown, field: string): number | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string') fail(`${field} must be an RFC 3339 string, got ${show(raw)}`);
  const time = parseRfc3339(raw);
  if (time === null) fail(`${field} ${show(raw)} is not an RFC 3339 timestamp`);
  return time;
}

/** Microseconds since the epoch (a JSON number or digit string) as epoch milliseconds, truncated. */
export function microsField(raw: unknown, field: string): number | null {
  if (raw === undefined || raw === null) return null;
  let micros: number;
  if (typeof raw === 'number') micros = raw;
  else if (typeof raw === 'string' && /^\d{1,16}$/.test(raw.trim())) micros = Number(raw.trim());
  else fail(`${field} must be microseconds since the epoch, got ${show(raw)}`);
  if (!Number.isSafeInteger(micros) || micros < 0) {
    fail(`${field} must be a non-negative integer of microseconds, got ${show(raw)}`);
  }
  return Math.floor(micros / 1000);
}
