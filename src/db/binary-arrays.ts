/**
 * Array parameters for set-based statements (`unnest($2::bigint[], $3::timestamptz[])`) in
 * PostgreSQL's binary array format. node-postgres sends a Buffer parameter as binary, so
 * the server takes the elements as they are (array_recv) instead of parsing a text literal
 * element by element, and the service writes each element into one buffer instead of
 * printing it into a string: at ingest's volume, thousands of elements per statement, the
 * printing and the server's parsing of timestamps were a cost of every read.
 *
 * The server checks the element type written here against the statement's cast: an
 * `int8Array` must meet a `bigint[]`, an `int4Array` an `int[]`, `timestampArray` a
 * `timestamptz[]`, `textArray` a `text[]`; anything else fails the statement ("binary data
 * has array element type …"), never converts silently.
 */

const OID = { int8: 20, int4: 23, text: 25, timestamptz: 1184 } as const;
const HEADER = 20; // ndim, flags (has nulls), element type, then one dimension: length, lower bound
const TWO_32 = 2 ** 32;

function header(buf: Buffer, elementType: number, length: number, hasNulls: boolean): number {
  // An empty array has no dimensions: what the server itself sends for '{}'.
  buf.writeInt32BE(length === 0 ? 0 : 1, 0);
  buf.writeInt32BE(hasNulls ? 1 : 0, 4);
  buf.writeInt32BE(elementType, 8);
  if (length === 0) return 12;
  buf.writeInt32BE(length, 12);
  buf.writeInt32BE(1, 16);
  return HEADER;
}

/** A safe integer as a big-endian two's complement int8 at `at`, without a BigInt. */
function writeInt64(buf: Buffer, v: number, at: number): void {
  const hi = Math.floor(v / TWO_32);
  buf.writeInt32BE(hi, at);
  buf.writeUInt32BE(v - hi * TWO_32, at + 4);
}

/**
 * One array of `values`: each element its byte length (-1 for null) and then its bytes.
 * `size` gives an element's byte length for the buffer's size, and `write` writes it at
 * `at` and answers how many bytes it wrote.
 */
function binaryArray<T>(
  values: ReadonlyArray<T | null>,
  elementType: number,
  size: (v: T) => number,
  write: (buf: Buffer, v: T, at: number) => number,
): Buffer {
  let hasNulls = false;
  let total = HEADER;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v == null) hasNulls = true;
    total += v == null ? 4 : 4 + size(v);
  }
  const buf = Buffer.allocUnsafe(total);
  let at = header(buf, elementType, values.length, hasNulls);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v == null) {
      buf.writeInt32BE(-1, at);
      at += 4;
    } else {
      const n = write(buf, v, at + 4);
      buf.writeInt32BE(n, at);
      at += 4 + n;
    }
  }
  return buf.subarray(0, at);
}

const EIGHT = () => 8;
const FOUR = () => 4;

/** A bigint[] parameter; throws on anything but safe integers and null. */
export function int8Array(values: ReadonlyArray<number | null>): Buffer {
  return binaryArray(values, OID.int8, EIGHT, (buf, v, at) => {
    if (!Number.isSafeInteger(v)) throw new TypeError(`not an integer: ${v}`);
    writeInt64(buf, v, at);
    return 8;
  });
}

/** An int[] parameter; throws on anything but 32-bit integers and null. */
export function int4Array(values: ReadonlyArray<number | null>): Buffer {
  return binaryArray(values, OID.int4, FOUR, (buf, v, at) => {
    if (!Number.isInteger(v) || v < -(2 ** 31) || v >= 2 ** 31) throw new TypeError(`not an int4: ${v}`);
    buf.writeInt32BE(v, at);
    return 4;
  });
}

// PostgreSQL counts timestamps in microseconds from 2000-01-01 UTC. Instants are kept to
// years 1-9999, as the text form that came before allowed; tracking is nowhere near either end.
const PG_EPOCH_MS = Date.UTC(2000, 0, 1);
const MIN_MS = Date.parse('0001-01-01T00:00:00.000Z');
const MAX_MS = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * A timestamptz[] parameter from epoch milliseconds (a fraction of a millisecond is cut
 * toward the past), null elements as SQL NULL. The microseconds exceed a double's exact integers near the ends of the
 * range, so they are composed from 32-bit halves.
 */
export function timestampArray(values: ReadonlyArray<number | null>): Buffer {
  return binaryArray(values, OID.timestamptz, EIGHT, (buf, v, at) => {
    if (!Number.isFinite(v) || v < MIN_MS || v > MAX_MS) throw new RangeError(`not an instant: ${v}`);
    const ms = Math.floor(v) - PG_EPOCH_MS;
    const hiMs = Math.floor(ms / TWO_32);
    const loMicros = (ms - hiMs * TWO_32) * 1000; // < 2^42: exact
    const carry = Math.floor(loMicros / TWO_32);
    buf.writeInt32BE(hiMs * 1000 + carry, at);
    buf.writeUInt32BE(loMicros - carry * TWO_32, at + 4);
    return 8;
  });
}

/** A text[] parameter: each element's UTF-8 bytes, no quoting or escaping. */
export function textArray(values: ReadonlyArray<string | null>): Buffer {
  return binaryArray(
    values,
    OID.text,
    (v) => Buffer.byteLength(v, 'utf8'),
    (buf, v, at) => buf.write(v, at, 'utf8'),
  );
}
