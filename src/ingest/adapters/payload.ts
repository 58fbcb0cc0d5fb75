/** Payloads above this size are refused whole: no reader family sends batches this large. */
export const MAX_PAYLOAD_BYTES = 1024 * 1024;

/** Payload bytes as text: UTF-8 (invalid sequences become U+FFFD and fail only their item), BOM removed. */
export function payloadText(payload: Buffer | Uint8Array | string): string {
  // A Buffer is decoded where it lies (Buffer.from would copy it first).
  const text =
    typeof payload === 'string'
      ? payload
      : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

export function payloadBytes(payload: Buffer | Uint8Array | string): number {
  return typeof payload === 'string' ? Buffer.byteLength(payload, 'utf8') : payload.byteLength;
}
