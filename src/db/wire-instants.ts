import pg from 'pg';
import { toWire } from '../http/timestamps.js';

/**
 * A timestamp already in the wire's form (`YYYY-MM-DDTHH:MM:SS.mmmZ`), as a statement sent
 * with `WIRE_INSTANTS` reads a timestamptz column.
 */
export type WireInstant = string & { readonly wireInstant: true };

const TIMESTAMPTZ = pg.types.builtins.TIMESTAMPTZ;

/**
 * The wire's form of PostgreSQL's text of a timestamptz. A page of fifty assets carries two
 * hundred timestamps; parsing each into a Date and printing it again with toISOString was a
 * sixth of node's time on `GET /assets` (0.1 ms a page). With the session in UTC the server
 * already writes `2026-11-29 06:50:59.022758+00`, which only needs its separators changed
 * and its fraction cut or padded to milliseconds (cut, as a Date would: toward zero). Any
 * other shape (another time zone's offset, a year past 9999 or BC, infinity) goes the
 * Date's way, so the result is the same either way.
 */
export function wireInstantOf(text: string): WireInstant {
  const n = text.length;
  if (
    n >= 22 &&
    n <= 29 &&
    text.charCodeAt(4) === 45 &&
    text.charCodeAt(7) === 45 &&
    text.charCodeAt(10) === 32 &&
    text.charCodeAt(13) === 58 &&
    text.charCodeAt(16) === 58 &&
    text.charCodeAt(n - 3) === 43 &&
    text.charCodeAt(n - 2) === 48 &&
    text.charCodeAt(n - 1) === 48 &&
    allDigits(text, 0, 4)
  ) {
    const date = text.slice(0, 10);
    const time = text.slice(11, 19);
    if (n === 22) return `${date}T${time}.000Z` as WireInstant;
    if (text.charCodeAt(19) === 46 && n >= 24) {
      const fraction = text.slice(20, Math.min(23, n - 3));
      return `${date}T${time}.${fraction.padEnd(3, '0')}Z` as WireInstant;
    }
  }
  return toWire(parseTimestamptz(text)) as WireInstant;
}

function allDigits(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

const parseTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ, 'text') as (text: string) => Date;

/**
 * The `types` of a statement whose timestamps only go out on the wire: timestamptz columns
 * arrive as WireInstant strings instead of Dates; every other type as node-postgres reads it.
 */
export const WIRE_INSTANTS = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
    if (oid === TIMESTAMPTZ && format !== 'binary') return wireInstantOf;
    return pg.types.getTypeParser(oid, format ?? 'text');
  },
};

/** The wire's form of a timestamp a statement read, with or without `WIRE_INSTANTS`. */
export function wireOf(value: Date | WireInstant): string {
  return typeof value === 'string' ? value : toWire(value);
}

export function wireOrNullOf(value: Date | WireInstant | null): string | null {
  return value === null ? null : wireOf(value);
}
