import type { Collector } from './collector.js';
import { fail, isRecord, show } from './item-checks.js';
import { antennaField, identity, numberField } from './scalar-fields.js';
import { typedTag } from './tag-values.js';
import { timeField } from './time-fields.js';
import type { TagType } from './types.js';

/**
 * tagtrail's own format, for anything that can post JSON (docs/reader-formats.md):
 *
 *   {"reader": "dock-3", "reads": [{"tag": "E280...", "tag_type": "rfid", "antenna": 1,
 *                                   "rssi": -60.5, "time": "2024-06-01T12:00:00.123Z"}]}
 *
 * or a single read object, or an array of read objects (or of such batches). Only tag is required.
 */
export function parseGenericJson(values: unknown[], out: Collector): void {
  for (const value of values) {
    const entries = Array.isArray(value) ? value : [value];
    for (const entry of entries) {
      // A read may carry extra fields, even one named reads (a read count): tag marks a read.
      if (isRecord(entry) && 'reads' in entry && !('tag' in entry)) batch(entry, out);
      else out.item('read', () => read(entry, null, out));
    }
  }
}

function batch(entry: Record<string, unknown>, out: Collector): void {
  let reads: unknown[] = [];
  let reader: string | null = null;
  out.item('batch', () => {
    if (entry.reader !== undefined && entry.reader !== null) {
      reader = identity(entry.reader);
      if (reader === null) fail(`reader must be a non-empty string, got ${show(entry.reader)}`);
    }
    if (!Array.isArray(entry.reads)) fail(`reads must be an array, got ${show(entry.reads)}`);
    reads = entry.reads;
  });
  for (const item of reads) out.item('read', () => read(item, reader, out));
}

const TAG_TYPES: readonly TagType[] = ['rfid', 'ble', 'barcode'];

function read(item: unknown, batchReader: string | null, out: Collector): void {
  if (!isRecord(item)) fail('read is not a JSON object');
  if (item.tag === undefined || item.tag === null) fail('tag is missing');
  let tagType: TagType = 'rfid';
  if (item.tag_type !== undefined && item.tag_type !== null) {
    if (!TAG_TYPES.includes(item.tag_type as TagType)) {
      fail(`tag_type must be one of ${TAG_TYPES.join(', ')}, got ${show(item.tag_type)}`);
    }
    tagType = item.tag_type as TagType;
  }
  let readerId = batchReader;
  if (item.reader !== undefined && item.reader !== null) {
    readerId = identity(item.reader);
    if (readerId === null) fail(`reader must be a non-empty string, got ${show(item.reader)}`);
  }
  const tagValue = typedTag(item.tag, tagType, 'tag');
  out.reads.push({
    antenna: antennaField(item.antenna, 'antenna'),
    tagValue,
    rssi: numberField(item.rssi, 'rssi'),
    readerTime: timeField(item.time, 'time'),
    readerId,
    tagType,
  });
}
