/**
 * Array parameters for set-based statements (`unnest($2::bigint[], $3::timestamptz[])`),
 * written as PostgreSQL array literals directly. node-postgres serialises a JS array
 * element by element, quoting and escaping each (a regular expression per element) and
 * formatting each Date in the local time zone by hand: at ingest's volume, thousands of
 * elements per statement, that was about a fifth of the service's CPU per read, with the
 * garbage it left. Integers and UTC instants need no quoting, so the literal is a join.
 */

const assertInteger = (v: number): void => {
  if (!Number.isSafeInteger(v)) throw new TypeError(`not an integer: ${v}`);
};

/** `{1,2,NULL}` for a bigint[] or int[] parameter; throws on anything but safe integers and null. */
export function intArray(values: ReadonlyArray<number | null>): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ',';
    if (v === null || v === undefined) out += 'NULL';
    else {
      assertInteger(v);
      out += v;
    }
  }
  return `${out}}`;
}

/**
 * `{"a","b \\"c\\"",NULL}` for a text[] parameter: each element quoted, with backslashes and
 * quotes escaped only in the rare element that has any.
 */
export function textArray(values: ReadonlyArray<string | null>): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ',';
    if (v === null || v === undefined) out += 'NULL';
    else if (v.includes('"') || v.includes('\\')) out += `"${v.replace(/[\\"]/g, '\\$&')}"`;
    else out += `"${v}"`;
  }
  return `${out}}`;
}

// toISOString writes years 0-9999 as four digits, others with a sign and six, which
// PostgreSQL does not read (nor year 0). No instant of tracking is near either end.
const MIN_MS = Date.parse('0001-01-01T00:00:00.000Z');
const MAX_MS = Date.parse('9999-12-31T23:59:59.999Z');

const DAY_MS = 86_400_000;
const TWO = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const THREE = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/**
 * The instants of one statement mostly fall on one day: its `YYYY-MM-DDT` is formatted
 * once (by toISOString) and the time of day by arithmetic, with no Date per element.
 */
class InstantWriter {
  private day = Number.NaN;
  private prefix = '';

  write(v: number): string {
    if (!Number.isFinite(v) || v < MIN_MS || v > MAX_MS) throw new RangeError(`not an instant: ${v}`);
    const ms = Math.floor(v);
    const day = Math.floor(ms / DAY_MS);
    if (day !== this.day) {
      this.day = day;
      this.prefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
    }
    let rest = ms - day * DAY_MS;
    const h = Math.floor(rest / 3_600_000);
    rest -= h * 3_600_000;
    const m = Math.floor(rest / 60_000);
    rest -= m * 60_000;
    const s = Math.floor(rest / 1000);
    return `${this.prefix}${TWO[h]}:${TWO[m]}:${TWO[s]}.${THREE[rest - s * 1000]}Z`;
  }
}

/** `{2026-11-25T02:07:02.064Z,...}` for a timestamptz[] parameter, from epoch milliseconds. */
export function instantArray(values: ReadonlyArray<number>): string {
  const writer = new InstantWriter();
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    out += writer.write(values[i]!);
  }
  return `${out}}`;
}
