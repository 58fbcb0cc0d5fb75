import type { Collector } from './collector.js';
import { fail, isRecord } from './item-checks.js';
import { antennaField, identity, numberField } from './scalar-fields.js';
import { hexTag } from './tag-values.js';
import { timeField } from './time-fields.js';

/**
 * Zebra FX7500 / FX9600 / ATR7000, IoT Connector data interface. Each tag data event is
 *
 *   {"type": "SIMPLE", "timestamp": "2024-06-01T12:00:00.123+0000",
 *    "data": {"idHex": "e280...", "antenna": 1, "peakRssi": -55, "reads": 1, "eventNum": 7,
 *             "format": "epc"}}
 *
 * where type is the operating mode (SIMPLE, INVENTORY, PORTAL, CONVEYOR, CUSTOM, ...). The HTTP
 * POST stream glues events together without separators ("{...}{...}"), MQTT batching sends a JSON
 * array; both are accepted. Management events (heartbeats, GPI, errors) that reach the data
 * endpoint are skipped silently.
 */
export function parseZebraFx(values: unknown[], out: Collector): void {
  for (const value of values) {
    const events = Array.isArray(value) ? value : [value];
    for (const event of events) out.item('event', () => tagData(event, out));
  }
}

const MANAGEMENT_TYPES = new Set(['heartbeat', 'gpi', 'gpo', 'error', 'warning', 'alert', 'userapp']);

function isManagementEvent(event: Record<string, unknown>): boolean {
  return (
    'component' in event || (typeof event.type === 'string' && MANAGEMENT_TYPES.has(event.type.toLowerCase()))
  );
}

function tagData(event: unknown, out: Collector): void {
  if (!isRecord(event)) fail('event is not a JSON object');
  const data = event.data;
  if (!isRecord(data) || data.idHex === undefined || data.idHex === null) {
    if (isManagementEvent(event)) return;
    fail(isRecord(data) ? 'data.idHex is missing' : 'data is missing or not an object');
  }
  let tagValue = hexTag(data.idHex, 'data.idHex');
  if (typeof data.format === 'string' && data.format.toLowerCase() === 'fastid') {
    tagValue = epcOfFastId(tagValue, data.PC);
  }
  const antenna = antennaField(data.antenna, 'data.antenna');
  // null is absent here as for every field: a reader that nulls peakRssi may still report rssi.
  const rssi =
    data.peakRssi !== undefined && data.peakRssi !== null
      ? numberField(data.peakRssi, 'data.peakRssi')
      : numberField(data.rssi, 'data.rssi');
  out.reads.push({
    antenna,
    tagValue,
    rssi,
    readerTime: timeField(event.timestamp, 'timestamp'),
    readerId: identity(data.hostName, data.hostname, data.MAC, data.mac),
    tagType: 'rfid',
  });
}

/**
 * With FastID on, idHex is the EPC followed by the TID. The PC word, when reported, gives the EPC
 * length (its top five bits count 16-bit words); without it the TID is taken to be the usual 96 bits.
 */
function epcOfFastId(idHex: string, pc: unknown): string {
  let epcLength = idHex.length - 24;
  if (typeof pc === 'string' && /^[0-9a-fA-F]{4}$/.test(pc)) epcLength = (Number.parseInt(pc, 16) >> 11) * 4;
  return epcLength > 0 && epcLength < idHex.length ? idHex.slice(0, epcLength) : idHex;
}
