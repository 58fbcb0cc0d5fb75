/**
 * How large an MQTT packet the embedded broker takes. The MQTT parser (mqtt-packet, under
 * aedes) has no limit of its own: it buffers a packet until its remaining length has
 * arrived, and that length may claim up to 256 MiB, so one connection that never logged in
 * could make the service hold 256 MiB, and a few of them take its memory. The limit is
 * checked as soon as a packet's fixed header is read, before any of its body is buffered.
 *
 * A CONNECT carries a client id, a user name, a password and maybe a will message: 64 KiB
 * is far above what a reader sends, and it is all a client that has not logged in yet can
 * make us hold per packet. Other packets may carry a reader's payload: ingest stores
 * payloads over 1 MiB cut at 1 MiB with a note (docs/ingest.md), so up to 8 MiB is still
 * taken that way; beyond it the connection is closed unacknowledged, like Mosquitto's
 * `message_size_limit`.
 */
export const MQTT_PACKET_LIMITS = { connect: 64 * 1024, other: 8 * 1024 * 1024 };

export type MqttPacketLimits = typeof MQTT_PACKET_LIMITS;

/** A packet refused for its size (the parse error on which the broker closes the connection). */
export class PacketTooLargeError extends Error {
  constructor(
    readonly cmd: string | undefined,
    readonly length: number,
    readonly limit: number,
  ) {
    super(`${cmd} packet of ${length} bytes is over the limit of ${limit}`);
    this.name = 'PacketTooLargeError';
  }
}

/** What this module touches of mqtt-packet's Parser (v9), an aedes client's `_parser`. */
interface ParserInternals {
  packet: { cmd?: string; length: number };
  _parseLength(): boolean;
  _emitError(err: Error): void;
}

/**
 * Makes the parser of an aedes client (what `aedes.handle` returns) refuse a packet whose
 * remaining length is over the limit: a parse error, on which aedes closes the connection.
 * The parser's internals are not public API; should an upgrade change them this throws
 * at the first connection (and test/ingest/packet-limit.test.ts fails) rather than the
 * limit silently going away.
 */
export function limitPacketSize(client: unknown, limits: MqttPacketLimits = MQTT_PACKET_LIMITS): void {
  const parser = (client as { _parser?: Partial<ParserInternals> })._parser;
  if (typeof parser?._parseLength !== 'function' || typeof parser._emitError !== 'function') {
    throw new Error('the MQTT parser has changed: the embedded broker cannot bound packet sizes');
  }
  const parseLength = parser._parseLength;
  parser._parseLength = function (this: ParserInternals) {
    if (!parseLength.call(this)) return false;
    const limit = this.packet.cmd === 'connect' ? limits.connect : limits.other;
    if (this.packet.length <= limit) return true;
    this._emitError(new PacketTooLargeError(this.packet.cmd, this.packet.length, limit));
    return false;
  };
}
