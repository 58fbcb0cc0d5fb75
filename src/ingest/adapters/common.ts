import type { AdapterResult, Read, TagType } from './types.js';

/** Payloads above this size are refused whole: no reader family sends batches this large. */
export const MAX_PAYLOAD_BYTES = 1024 * 1024;

/** Beyond this many messages the rest are summarised, so hostile input cannot grow the result without bound. */
export const MAX_ERRORS = 100;

/** Longest tag value the master data accepts (API-SPEC: tag value length 1..255). */
export const MAX_TAG_LENGTH = 255;

// ---------------------------------------------------------------------------
// Tag values

/** Hex EPC upper-cased, whitespace, ':' and '-' removed. */
export function normalizeTagValue(v: string): string {
  return v.replace(/[\s:-]/g, '').toUpperCase();
}

/** The key two tag values are matched on: normalized, leading zeros stripped; an all-zero value is '0'. */
export function tagMatchKey(v: string): string {
  const normalized = normalizeTagValue(v);
  if (normalized === '') return '';
  const stripped = normalized.replace(/^0+/, '');
  return stripped === '' ? '0' : stripped;
}

const HEX = /^[0-9A-F]+$/;
// C0 controls and DEL; the same characters the tag value pattern in API-SPEC refuses, plus tab and newlines.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\x00-\x1F\x7F]/;

/**
 * Thrown by field readers; caught per item, so one bad item becomes one error message. Not an
 * Error subclass: hostile payloads can fail hundreds of thousands of items, and capturing a stack
 * trace for each would dominate the cost.
 */
export class ItemError {
  constructor(readonly message: string) {}
}

export function fail(message: string): never {
  throw new ItemError(message);
}

/** A short, printable rendering of an offending value for error messages. */
export function show(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object' && value !== null) return 'an object';
  const text =
    typeof value === 'string'
      ? JSON.stringify(value.length > 60 ? value.slice(0, 60) : value)
      : String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** An RFID EPC given as hex text: normalized, and refused unless every character is a hex digit. */
export function hexTag(raw: unknown, field: string): string {
  if (raw === undefined || raw === null) fail(`${field} is missing`);
  if (typeof raw !== 'string') fail(`${field} must be a string, got ${show(raw)}`);
  const value = normalizeTagValue(raw);
  if (value === '') fail(`${field} is empty`);
  if (!HEX.test(value)) fail(`${field} ${show(raw)} is not hexadecimal`);
  if (value.length > MAX_TAG_LENGTH) fail(`${field} is longer than ${MAX_TAG_LENGTH} characters`);
  return value;
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** An EPC given as base64 (standard or URL-safe alphabet, padding optional), returned as upper-case hex. */
export function base64Tag(raw: unknown, field: string): string {
  if (typeof raw !== 'string') fail(`${field} must be a string, got ${show(raw)}`);
  const text = raw.trim();
  const body = text.replace(/=+$/, '');
  if (body === '') fail(`${field} is empty`);
  if (!BASE64.test(text) || body.length % 4 === 1 || (text.length > body.length && text.length % 4 !== 0)) {
    fail(`${field} ${show(raw)} is not base64`);
  }
  const hex = Buffer.from(body.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('hex').toUpperCase();
  if (hex === '') fail(`${field} is empty`);
  if (hex.length > MAX_TAG_LENGTH) fail(`${field} is longer than ${MAX_TAG_LENGTH} hex characters`);
  return hex;
}

/** A tag value of the given type; see docs/reader-formats.md for the rules per type. */
export function typedTag(raw: unknown, type: TagType, field: string): string {
  if (type === 'rfid') return hexTag(raw, field);
  if (typeof raw !== 'string') fail(`${field} must be a string, got ${show(raw)}`);
  const value = type === 'ble' ? normalizeTagValue(raw) : raw.trim();
  if (value === '') fail(`${field} is empty`);
  if (CONTROL.test(value)) fail(`${field} contains control characters`);
  if (value.length > MAX_TAG_LENGTH) fail(`${field} is longer than ${MAX_TAG_LENGTH} characters`);
  return value;
}

// ---------------------------------------------------------------------------
// Numbers

const INTEGER_TEXT = /^\d{1,5}$/;
const DECIMAL_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

/** An antenna port: an integer 0..65535 (LLRP's range), as a number or digit string; absent or null is null. */
export function antennaField(raw: unknown, field: string): number | null {
  if (raw === undefined || raw === null) return null;
  let value: number;
  if (typeof raw === 'number') value = raw;
  else if (typeof raw === 'string' && INTEGER_TEXT.test(raw.trim())) value = Number(raw.trim());
  else fail(`${field} must be an integer, got ${show(raw)}`);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    fail(`${field} must be an integer from 0 to 65535, got ${show(raw)}`);
  }
  return value;
}

/** A finite number, or a decimal string (some readers quote RSSI); absent or null is null. */
export function numberField(raw: unknown, field: string): number | null {
  if (raw === undefined || raw === null) return null;
  let value: number;
  if (typeof raw === 'number') value = raw;
  else if (typeof raw === 'string' && DECIMAL_TEXT.test(raw.trim())) value = Number(raw.trim());
  else fail(`${field} must be a number, got ${show(raw)}`);
  if (!Number.isFinite(value)) fail(`${field} must be a finite number, got ${show(raw)}`);
  return value;
}

/** The first non-empty string (trimmed) or finite number (as text) among the candidates, or null. */
export function identity(...candidates: unknown[]): string | null {
  for (const candidate of candidates) {
    if (typeof candidate === 'string' && candidate.trim() !== '') return candidate.trim();
    if (typeof candidate === 'number' && Number.isFinite(candidate)) return String(candidate);
  }
  return null;
}

// ---------------------------------------------------------------------------
// Time

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):?(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Epoch milliseconds of an RFC 3339 timestamp, or null when the text is not one. The offset may be
 * written with or without its colon (Zebra writes "+0000"); fractional seconds may have any number of
 * digits and are truncated to the millisecond (Impinj writes nanoseconds).
 */
export function parseRfc3339(text: string): number | null {
  const m = RFC3339.exec(text.trim());
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
  if (hour > 23 || minute > 59 || second > 60) return null;
  const millis = Number((m[7] ?? '').slice(0, 3).padEnd(3, '0'));
  let offsetMinutes = 0;
  if (m[9] !== undefined) {
    const offsetHours = Number(m[10]);
    const offsetMins = Number(m[11]);
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0..99 to 1900..1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  return date.getTime() - offsetMinutes * 60_000;
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

// ---------------------------------------------------------------------------
// Collecting results

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

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

// ---------------------------------------------------------------------------
// Splitting a payload into JSON values

interface Segment {
  /** value: a balanced object or array; truncated: the text ended inside it; garbage: text between values. */
  kind: 'value' | 'truncated' | 'garbage';
  start: number;
  text: string;
}

/**
 * Splits text into top-level JSON objects and arrays without parsing them: a bracket counter that
 * knows about strings and escapes. Values may be glued together ("{...}{...}", as Zebra's HTTP
 * stream does), separated by whitespace or newlines (NDJSON) or by commas. Anything outside an
 * object or array is reported as garbage. A raw newline ends a string for scanning purposes (JSON
 * strings cannot contain one), so an unterminated string does not swallow the following lines.
 */
export function scanSegments(text: string): Segment[] {
  const segments: Segment[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    // whitespace and separators between values
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x2c || c === 0xfeff) {
      i++;
      continue;
    }
    if (c !== 0x7b && c !== 0x5b) {
      const start = i;
      while (i < n && text[i] !== '{' && text[i] !== '[') i++;
      segments.push({ kind: 'garbage', start, text: text.slice(start, i) });
      continue;
    }
    const start = i;
    let depth = 0;
    let done = false;
    while (i < n) {
      const ch = text.charCodeAt(i);
      if (ch === 0x22) {
        // string: skip to the closing quote, honouring backslash escapes
        i++;
        while (i < n) {
          const s = text.charCodeAt(i);
          if (s === 0x5c) i += 2;
          else if (s === 0x22) break;
          else if (s === 0x0a) {
            i--; // let the outer loop see the newline
            break;
          } else i++;
        }
        i++;
        continue;
      }
      if (ch === 0x7b || ch === 0x5b) depth++;
      else if (ch === 0x7d || ch === 0x5d) {
        depth--;
        if (depth === 0) {
          i++;
          done = true;
          break;
        }
      }
      i++;
    }
    segments.push({ kind: done ? 'value' : 'truncated', start, text: text.slice(start, Math.min(i, n)) });
  }
  return segments;
}

/**
 * Where text stops being one JSON value (RFC 8259, as JSON.parse reads it), or -1 when it is one.
 * Checking first lets malformed input be reported without JSON.parse throwing: on a hostile 1 MiB
 * payload of hundreds of thousands of small broken values, those throws cost seconds.
 */
export function jsonErrorAt(text: string): number {
  const n = text.length;
  const stack: number[] = []; // open containers: 0x7d for an object, 0x5d for an array
  let i = 0;
  const skipSpace = () => {
    let c = text.charCodeAt(i);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(++i);
  };
  const isDigit = (at: number) => {
    const c = text.charCodeAt(at);
    return c >= 0x30 && c <= 0x39;
  };
  const digits = () => {
    if (!isDigit(i)) return false;
    while (isDigit(i)) i++;
    return true;
  };
  const string = () => {
    i++; // opening quote
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return true;
      }
      if (c < 0x20) return false;
      if (c !== 0x5c) {
        i++;
        continue;
      }
      const e = text[i + 1];
      if (e === 'u') {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return false;
        i += 6;
      } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
      else return false;
    }
    return false;
  };
  const key = () => {
    skipSpace();
    if (text[i] !== '"' || !string()) return false;
    skipSpace();
    if (text[i] !== ':') return false;
    i++;
    return true;
  };
  let expectValue = true;
  for (;;) {
    if (expectValue) {
      skipSpace();
      const c = text[i];
      if (c === '{' || c === '[') {
        i++;
        skipSpace();
        const close = c === '{' ? '}' : ']';
        if (text[i] === close) i++;
        else {
          stack.push(close.charCodeAt(0));
          if (c === '{' && !key()) return i;
          continue; // the first member's value
        }
      } else if (c === '"') {
        if (!string()) return i;
      } else if (c === 't' || c === 'f' || c === 'n') {
        const word = c === 't' ? 'true' : c === 'f' ? 'false' : 'null';
        if (!text.startsWith(word, i)) return i;
        i += word.length;
      } else if (c === '-' || isDigit(i)) {
        if (c === '-') i++;
        if (text[i] === '0') i++;
        else if (!digits()) return i;
        if (text[i] === '.') {
          i++;
          if (!digits()) return i;
        }
        if (text[i] === 'e' || text[i] === 'E') {
          i++;
          if (text[i] === '+' || text[i] === '-') i++;
          if (!digits()) return i;
        }
      } else return i;
      expectValue = false;
    }
    skipSpace();
    const close = stack.at(-1);
    if (close === undefined) return i === n ? -1 : i;
    const c = text.charCodeAt(i);
    if (c === 0x2c) {
      i++;
      if (close === 0x7d && !key()) return i;
      expectValue = true;
    } else if (c === close) {
      i++;
      stack.pop();
    } else return i;
  }
}

/** Line numbers for offsets in one text; the index of line starts is built on first use. */
function lineFinder(text: string): (offset: number) => number {
  let starts: number[] | undefined;
  return (offset) => {
    if (!starts) {
      starts = [0];
      for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
    }
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

/**
 * The JSON values in a payload: the whole text when it is one JSON document, otherwise every
 * object or array found by scanSegments. A segment that does not parse and spans several lines is
 * retried line by line, so one truncated NDJSON line does not hide the lines after it.
 */
export function splitJsonValues(text: string, out: Collector): unknown[] {
  if (text.trim() === '') {
    out.error('payload is empty');
    return [];
  }
  if (jsonErrorAt(text) === -1) {
    try {
      return [JSON.parse(text)];
    } catch {
      // jsonErrorAt and JSON.parse disagree (they should not): fall back to scanning
    }
  }
  const values: unknown[] = [];
  const lineOf = lineFinder(text);
  const report = (offset: number, what: string) =>
    out.error(`line ${lineOf(offset)}, offset ${offset}: ${what}`);
  /** Adds the segment's value, or returns where (relative to the segment) and why it is not one. */
  const attempt = (segment: Segment): [number, string] | undefined => {
    if (segment.kind === 'garbage')
      return [0, `unexpected ${show(segment.text)} outside a JSON object or array`];
    if (segment.kind === 'truncated') return [0, 'truncated JSON value'];
    const at = jsonErrorAt(segment.text);
    if (at !== -1) return [at, `invalid JSON at ${show(segment.text.slice(at, at + 12) || 'end of value')}`];
    try {
      values.push(JSON.parse(segment.text));
      return undefined;
    } catch {
      return [0, 'invalid JSON'];
    }
  };
  for (const segment of scanSegments(text)) {
    const failure = attempt(segment);
    if (failure === undefined) continue;
    if (segment.kind === 'garbage' || !segment.text.includes('\n')) {
      report(segment.start + failure[0], failure[1]);
      continue;
    }
    // Retry line by line, so one broken NDJSON line does not hide the lines after it.
    const before = values.length;
    const lineErrors: Array<[number, string]> = [];
    let lineStart = segment.start;
    for (const line of segment.text.split('\n')) {
      for (const part of scanSegments(line)) {
        const partFailure = attempt(part);
        if (partFailure) lineErrors.push([lineStart + part.start + partFailure[0], partFailure[1]]);
      }
      lineStart += line.length + 1;
    }
    if (values.length === before) {
      report(segment.start + failure[0], failure[1]); // one message for a malformed document, not one per line
    } else {
      for (const [offset, what] of lineErrors) report(offset, what);
    }
  }
  return values;
}

/** Payload bytes as text: UTF-8 (invalid sequences become U+FFFD and fail only their item), BOM removed. */
export function payloadText(payload: Buffer | Uint8Array | string): string {
  const text = typeof payload === 'string' ? payload : Buffer.from(payload).toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

export function payloadBytes(payload: Buffer | Uint8Array | string): number {
  return typeof payload === 'string' ? Buffer.byteLength(payload, 'utf8') : payload.byteLength;
}
