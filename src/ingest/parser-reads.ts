/**
 * The MQTT parser's reads of its buffered bytes without a Buffer per read. mqtt-packet (v9,
 * under aedes) keeps what a socket gave in a BufferList (bl v6), whose `readUInt8`,
 * `readUInt16BE`, `readUInt32BE` and `toString` each slice a new Buffer out of the list
 * (and an offset pair) to read one to four bytes or a topic: five or six short-lived
 * Buffers of every PUBLISH. When the bytes lie within one of the list's buffers these read
 * them where they are; otherwise (across buffers, out of range, a negative or fractional
 * offset) the list's own method answers, so every result and every error is bl's.
 */

/** What this module touches of bl's BufferList, an aedes client's `_parser._list`. */
interface ListInternals {
  _bufs: Buffer[];
  length: number;
  readUInt8(offset?: number): number;
  readUInt16BE(offset?: number): number;
  readUInt32BE(offset?: number): number;
  toString(encoding?: BufferEncoding, start?: number, end?: number): string;
}

/**
 * The buffer of `list` holding bytes [offset, offset + size), or undefined when they are
 * not all in one buffer (or the offset is not a plain index); its index in the buffer is
 * left in `at`, so that a read allocates nothing.
 */
let at = 0;
function bufferOf(list: ListInternals, offset: number, size: number): Buffer | undefined {
  if (!Number.isInteger(offset) || offset < 0) return undefined;
  const bufs = list._bufs;
  let start = 0;
  for (let i = 0; i < bufs.length; i++) {
    const buf = bufs[i]!;
    const end = start + buf.length;
    if (offset < end) {
      if (offset + size > end) return undefined;
      at = offset - start;
      return buf;
    }
    start = end;
  }
  return undefined;
}

/**
 * Gives the parser of an aedes client (what `aedes.handle` returns) reads without slices.
 * The parser's internals are not public API; should an upgrade change them this throws at
 * the first connection (and test/ingest/parser-reads.test.ts fails) rather than the reads
 * silently changing.
 */
export function readWithoutSlices(client: unknown): void {
  const list = (client as { _parser?: { _list?: Partial<ListInternals> } })._parser?._list;
  if (
    !list ||
    !Array.isArray(list._bufs) ||
    typeof list.readUInt8 !== 'function' ||
    typeof list.readUInt16BE !== 'function' ||
    typeof list.readUInt32BE !== 'function' ||
    typeof list.toString !== 'function'
  ) {
    throw new Error("the MQTT parser has changed: its buffer list's reads cannot be replaced");
  }
  const { readUInt8, readUInt16BE, readUInt32BE, toString: text } = list as ListInternals;
  const own = list as ListInternals;
  own.readUInt8 = function (this: ListInternals, offset = 0) {
    const buf = bufferOf(this, offset, 1);
    return buf ? buf[at]! : readUInt8.call(this, offset);
  };
  own.readUInt16BE = function (this: ListInternals, offset = 0) {
    const buf = bufferOf(this, offset, 2);
    return buf ? buf.readUInt16BE(at) : readUInt16BE.call(this, offset);
  };
  own.readUInt32BE = function (this: ListInternals, offset = 0) {
    const buf = bufferOf(this, offset, 4);
    return buf ? buf.readUInt32BE(at) : readUInt32BE.call(this, offset);
  };
  own.toString = function (this: ListInternals, encoding?: BufferEncoding, start?: number, end?: number) {
    if (start !== undefined && end !== undefined && end >= start && end <= this.length) {
      const buf = bufferOf(this, start, end - start);
      if (buf && end > start) return buf.toString(encoding, at, at + end - start);
    }
    return text.call(this, encoding, start, end);
  };
}
