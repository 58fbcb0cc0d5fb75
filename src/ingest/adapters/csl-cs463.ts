import type { Collector } from './collector.js';
import { fail, isRecord } from './item-checks.js';
import { antennaField, identity, numberField } from './scalar-fields.js';
import { hexTag } from './tag-values.js';
import { microsField } from './time-fields.js';

/**
 * CSL CS463, JSON data format over MQTT or HTTP. Each message is
 *
 *   {"sequenceNumber": 0, "rfidReaderName": "CS463-1", "rfidReaderSerialNumber": "...",
 *    "numberOfTags": 1,
 *    "tags": [{"epc": "E280...", "timeStampOfRead": 1717243200123456, "antennaPort": 1,
 *              "rssi": "-61.5", "timeZone": "+0:00", "capturePointName": "..."}]}
 *
 * The fields present and their labels are configured on the reader (its "data format"); the
 * defaults are used here. timeStampOfRead is microseconds since the epoch. antennaPort and rssi
 * arrive as strings or numbers depending on the configured field (AntennaPort / AntennaPort_Number,
 * RSSI / RSSI_Number). A message without tags that names a reader (a status message) is skipped.
 */
export function parseCslCs463(values: unknown[], out: Collector): void {
  for (const value of values) {
    const messages = Array.isArray(value) ? value : [value];
    for (const message of messages) {
      let tags: unknown[] = [];
      let readerId: string | null = null;
      out.item('message', () => {
        if (!isRecord(message)) fail('message is not a JSON object');
        // The reader's preloaded example data format carries only the MAC addresses, and
        // the Ethernet one is "" on a reader connected by Wi-Fi.
        readerId = identity(
          message.rfidReaderName,
          message.rfidReaderSerialNumber,
          message.pcEthernetMACAddress,
          message.pcWiFiMACAddress,
        );
        if (message.tags === undefined || message.tags === null) {
          if (readerId !== null || 'rfidReaderModel' in message) return;
          fail('message has no tags array');
        }
        if (!Array.isArray(message.tags)) fail(`tags must be an array`);
        tags = message.tags;
      });
      for (const tag of tags) out.item('tag', () => tagRead(tag, readerId, out));
    }
  }
}

function tagRead(tag: unknown, readerId: string | null, out: Collector): void {
  if (!isRecord(tag)) fail('tag is not a JSON object');
  const tagValue = hexTag(tag.epc, 'epc');
  out.reads.push({
    antenna: antennaField(tag.antennaPort, 'antennaPort'),
    tagValue,
    rssi: numberField(tag.rssi, 'rssi'),
    readerTime: microsField(tag.timeStampOfRead, 'timeStampOfRead'),
    readerId,
    tagType: 'rfid',
  });
}
