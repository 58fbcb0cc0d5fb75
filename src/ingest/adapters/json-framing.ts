import type { Collector } from './collector.js';
import { show } from './item-checks.js';

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
  // Most payloads are one document: parsed at once, without checking it first (the check
  // walks the text again, a few µs a message at one read per message). One that is not
  // throws once here and is taken apart below, each part checked before it is parsed.
  try {
    return [JSON.parse(text)];
  } catch {
    // not one JSON document: scan it
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
