import { daysInMonth, rfc3339Instant } from '../../http/timestamps.js';
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
  return zuluInstant(text) ?? anyReaderInstant(text);
}

/** parseRfc3339 of every form, by the API's own parser. */
export function anyReaderInstant(text: string): number | null {
  const m = READER_RFC3339.exec(text.trim());
  if (!m) return null;
  const [, date, time, fraction, zulu, offsetHours, offsetMinutes] = m;
  // Digits past the ninth cannot reach the millisecond, and the strict form allows only nine.
  const strictFraction = fraction === undefined ? '' : `.${fraction.slice(0, 9)}`;
  const strictOffset = zulu ?? `${offsetHours}:${offsetMinutes}`;
  return rfc3339Instant(`${date}T${time}${strictFraction}${strictOffset}`, { leapSecond: true });
}

const digit = (text: string, i: number): number => {
  const d = text.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : Number.NaN;
};
const digits = (text: string, i: number, n: number): number => {
  let v = 0;
  for (let k = i; k < i + n; k++) v = v * 10 + digit(text, k);
  return v;
};

/**
 * parseRfc3339 of the form nearly every reader sends, `2024-06-01T12:00:00.123Z` (a
 * fraction of any length or none), read digit by digit: the two regular expressions and
 * the rewritten string cost 1.5 µs and their garbage per read (docs/ingest.md). Undefined
 * for any other form, which the general path decides; the same answer where both apply
 * (a property test holds them together).
 */
export function zuluInstant(text: string): number | undefined {
  const end = text.length - 1;
  if (end < 19 || (text[end] !== 'Z' && text[end] !== 'z')) return undefined;
  if (text[4] !== '-' || text[7] !== '-' || text[13] !== ':' || text[16] !== ':') return undefined;
  if (text[10] !== 'T' && text[10] !== 't' && text[10] !== ' ') return undefined;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  let millis = 0;
  if (end > 19) {
    // A fraction: '.' and at least one digit, all digits up to the Z; the first three count.
    if (text[19] !== '.' || end === 20) return undefined;
    for (let i = 20; i < end; i++) {
      const d = digit(text, i);
      if (Number.isNaN(d)) return undefined;
      if (i < 23) millis += d * 10 ** (22 - i);
    }
  }
  // NaN (a non-digit) fails every comparison below.
  if (!(year >= 100 && month >= 1 && month <= 12 && day >= 1)) return undefined;
  if (!(day <= daysInMonth(year, month) && hour <= 23 && minute <= 59 && second <= 60)) return undefined;
  // A leap second (:60) is the next minute's first, as in rfc3339Instant; years from 100 on,
  // where Date.UTC takes the year as it is.
  return Date.UTC(year, month - 1, day, hour, minute, second, millis);
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
