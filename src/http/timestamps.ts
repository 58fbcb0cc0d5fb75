/**
 * RFC 3339 handling for the wire. Dates are kept as epoch milliseconds: inbound digits
 * below the millisecond are truncated toward zero (API-SPEC Conventions), and outbound
 * timestamps always carry exactly three fractional digits and `Z`.
 */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|([+-])(\d{2}):(\d{2}))$/;

const ZERO_INSTANT = Date.UTC(2000, 0, 1) - 730119 * 86400000; // 0001-01-01T00:00:00Z
const EPOCH_INSTANT = 0;
const MIN_INSTANT = ZERO_INSTANT;
const MAX_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Where a leap second (:60) is taken: anywhere, only where one can be inserted (23:59:60 UTC
 * on 30 June or 31 December, every leap second there has been), or nowhere.
 */
export type LeapSeconds = boolean | 'june-december-end';

/**
 * Epoch milliseconds of an RFC 3339 string, or null when it is not one, with no limit on the
 * year. Shared with the reader adapters, which rewrite their laxer forms into this one first. RFC
 * 3339 allows a leap second (:60), taken as the next minute's first second (the instant POSIX
 * time gives it): the adapters accept one anywhere; the API only where leap seconds are
 * inserted, at 23:59:60 UTC at the end of June or December (docs/api-decisions.md).
 */
export function rfc3339Instant(text: string, { leapSecond }: { leapSecond: LeapSeconds }): number | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > (leapSecond ? 60 : 59)) return null;
  const millis = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  let offsetMinutes = 0;
  if (m[9]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0..99 to 1900..1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  const instant = date.getTime() - offsetMinutes * 60000;
  if (second === 60 && leapSecond === 'june-december-end' && !followsLeapSecond(instant - millis))
    return null;
  return instant;
}

const DAY_MS = 86_400_000;
/**
 * Whether a leap second can come just before `instant` (the one :60 maps to): it starts a UTC
 * day that is 1 July or 1 January. RFC 3339 (5.7) allows :60 only at the end of a month where
 * one is inserted; they have all been, and are announced only, at the end of June and December.
 */
function followsLeapSecond(instant: number): boolean {
  if (((instant % DAY_MS) + DAY_MS) % DAY_MS !== 0) return false;
  const date = new Date(instant);
  return date.getUTCDate() === 1 && (date.getUTCMonth() === 0 || date.getUTCMonth() === 6);
}

/** Epoch milliseconds of an RFC 3339 string, or null when it is not one or is out of range. */
export function parseRfc3339(text: string): number | null {
  const instant = rfc3339Instant(text, { leapSecond: 'june-december-end' });
  return instant === null || !inRange(instant) ? null : instant;
}

/**
 * Instants the API takes: RFC 3339 writes four-digit years, and an offset must not carry
 * an instant out of 0001..9999 in UTC, the form every timestamp is answered in.
 */
export const INSTANT_RANGE = { min: toWire(MIN_INSTANT), max: toWire(MAX_INSTANT) };
const inRange = (instant: number) => instant >= MIN_INSTANT && instant <= MAX_INSTANT;

/** Whether the text is RFC 3339 whose instant is outside INSTANT_RANGE (not a bad form). */
export function outOfRange(text: string): boolean {
  const instant = rfc3339Instant(text, { leapSecond: 'june-december-end' });
  return instant !== null && !inRange(instant);
}

/** The two instants the spec refuses as real timestamps (zero value and Unix epoch). */
export function isSentinelInstant(millis: number): boolean {
  return millis === ZERO_INSTANT || millis === EPOCH_INSTANT;
}

/** `YYYY-MM-DDTHH:MM:SS.mmmZ`, always. */
export function toWire(value: Date | number): string {
  return (typeof value === 'number' ? new Date(value) : value).toISOString();
}

export function toWireOrNull(value: Date | number | null | undefined): string | null {
  return value === null || value === undefined ? null : toWire(value);
}
