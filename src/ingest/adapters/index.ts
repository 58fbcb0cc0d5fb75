import { Collector } from './collector.js';
import { parseCslCs463 } from './csl-cs463.js';
import { parseGenericJson } from './generic-json.js';
import { parseImpinjR700 } from './impinj-r700.js';
import { splitJsonValues } from './json-framing.js';
import { MAX_PAYLOAD_BYTES, payloadBytes, payloadText } from './payload.js';
import type { AdapterResult, ReaderFamily } from './types.js';
import { parseZebraFx } from './zebra-fx.js';

export { MAX_PAYLOAD_BYTES } from './payload.js';
export { normalizeTagValue } from './tag-values.js';
export { parseRfc3339 } from './time-fields.js';
export type { AdapterResult, Read, ReaderFamily, TagType } from './types.js';
export { READER_FAMILIES } from './types.js';

const ADAPTERS: Record<ReaderFamily, (values: unknown[], out: Collector) => void> = {
  'impinj-r700': parseImpinjR700,
  'zebra-fx': parseZebraFx,
  'csl-cs463': parseCslCs463,
  'generic-json': parseGenericJson,
};

/**
 * Turns one payload, as received from MQTT or a reader webhook, into reads. Pure and total: it
 * never throws; every malformed item becomes one message in `errors` and the other items still
 * produce reads. Payloads over MAX_PAYLOAD_BYTES are refused with a single error.
 */
export function parsePayload(family: ReaderFamily, payload: Buffer | string): AdapterResult {
  try {
    const adapter = Object.hasOwn(ADAPTERS, family) ? ADAPTERS[family] : undefined;
    if (!adapter)
      return { reads: [], errors: [`unknown reader family ${JSON.stringify(String(family))}`], failed: 1 };
    if (typeof payload !== 'string' && !(payload instanceof Uint8Array)) {
      return { reads: [], errors: ['payload must be a Buffer or a string'], failed: 1 };
    }
    const size = payloadBytes(payload);
    if (size > MAX_PAYLOAD_BYTES) {
      return {
        reads: [],
        errors: [`payload is ${size} bytes, over the ${MAX_PAYLOAD_BYTES}-byte limit`],
        failed: 1,
      };
    }
    const out = new Collector();
    adapter(splitJsonValues(payloadText(payload), out), out);
    return out.result();
  } catch (err) {
    return { reads: [], errors: [`adapter failed: ${String(err)}`], failed: 1 };
  }
}
