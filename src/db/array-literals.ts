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

// toISOString writes years 0-9999 as four digits, others with a sign and six, which
// PostgreSQL does not read (nor year 0). No instant of tracking is near either end.
const MIN_MS = Date.parse('0001-01-01T00:00:00.000Z');
const MAX_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** `{2026-11-25T02:07:02.064Z,...}` for a timestamptz[] parameter, from epoch milliseconds. */
export function instantArray(values: ReadonlyArray<number>): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (!Number.isFinite(v) || v < MIN_MS || v > MAX_MS) throw new RangeError(`not an instant: ${v}`);
    if (i > 0) out += ',';
    out += new Date(v).toISOString();
  }
  return `${out}}`;
}
