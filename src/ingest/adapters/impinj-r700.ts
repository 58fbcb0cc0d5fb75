import type { Collector } from './collector.js';
import { fail, isRecord } from './item-checks.js';
import { antennaField, identity, numberField } from './scalar-fields.js';
import { base64Tag, hexTag } from './tag-values.js';
import { timeField } from './time-fields.js';

/**
 * Impinj R700 / R720, IoT device interface (firmware 7.x/8.x). Each event is
 *
 *   {"timestamp": "2024-06-01T12:00:00.123456789Z", "hostname": "impinj-14-1b-b0",
 *    "eventType": "tagInventory",
 *    "tagInventoryEvent": {"epc": "<base64>", "epcHex": "E280...", "antennaPort": 1,
 *                          "peakRssiCdbm": -5400, "lastSeenTime": "..."}}
 *
 * The webhook posts a JSON array of events; the HTTP stream and MQTT carry one event per line;
 * a single object is accepted too. Which tagInventoryEvent fields appear is the reader's
 * eventConfig: by default epc (base64) is on and epcHex, lastSeenTime and hostname are off.
 * Events of any other eventType (inventoryStatus, antennaConnected, ...) are skipped silently.
 */
export function parseImpinjR700(values: unknown[], out: Collector): void {
  for (const value of values) {
    const events = Array.isArray(value) ? value : [value];
    for (const event of events) out.item('event', () => tagInventory(event, out));
  }
}

function tagInventory(event: unknown, out: Collector): void {
  if (!isRecord(event)) fail('event is not a JSON object');
  const inventory = event.tagInventoryEvent;
  if (event.eventType !== 'tagInventory' && inventory === undefined) {
    if (typeof event.eventType === 'string') return; // another kind of reader event
    fail('not an Impinj IoT event: no eventType');
  }
  if (!isRecord(inventory)) fail('tagInventoryEvent is missing or not an object');

  let tagValue: string;
  if (inventory.epcHex !== undefined && inventory.epcHex !== null) {
    tagValue = hexTag(inventory.epcHex, 'tagInventoryEvent.epcHex');
  } else if (inventory.epc !== undefined && inventory.epc !== null) {
    tagValue = base64Tag(inventory.epc, 'tagInventoryEvent.epc');
  } else {
    fail('tagInventoryEvent has neither epcHex nor epc');
  }
  const antenna = antennaField(inventory.antennaPort, 'tagInventoryEvent.antennaPort');
  const centiDbm = numberField(inventory.peakRssiCdbm, 'tagInventoryEvent.peakRssiCdbm');
  // lastSeenTime is when the tag was seen; timestamp is when the event was queued for delivery.
  const readerTime =
    inventory.lastSeenTime !== undefined && inventory.lastSeenTime !== null
      ? timeField(inventory.lastSeenTime, 'tagInventoryEvent.lastSeenTime')
      : timeField(event.timestamp, 'timestamp');
  out.reads.push({
    antenna,
    tagValue,
    rssi: centiDbm === null ? null : centiDbm / 100,
    readerTime,
    readerId: identity(event.hostname),
    tagType: 'rfid',
  });
}
