/**
 * A reader for the ingest benchmark that costs the two shared cores as little as an MQTT
 * publisher can: real readers are devices of their own, and the bench's publishers run on
 * the service's machine. MQTT.js spent 35-41 µs of CPU per one-read message (its packet
 * objects, its outgoing store, its acknowledgement handling), more than the embedded broker
 * itself; this client's messages are encoded before the clock starts (mqtt-packet), sent
 * in one write per turn of the event loop, and acknowledged by reading the 4-byte PUBACKs.
 *
 * MQTT 3.1.1, QoS 1, clean session, no keepalive, no reconnection: a connection the broker
 * drops fails every message in flight, and the bench with them, instead of being retried.
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import mqttPacket from 'mqtt-packet';

/** A PUBLISH packet encoded ahead, its packet identifier filled in when it is sent. */
export interface PreparedPublish {
  bytes: Buffer;
  /** Offset of the 2-byte packet identifier in `bytes`. */
  idAt: number;
}

export function preparePublish(topic: string, payload: string | Buffer): PreparedPublish {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const bytes = mqttPacket.generate({
    cmd: 'publish',
    topic,
    payload: body,
    qos: 1,
    messageId: 1,
    retain: false,
    dup: false,
  });
  return { bytes, idAt: bytes.length - body.length - 2 };
}

const CONNACK = 0x20;
const PUBACK = 0x40;
/** Packet identifiers are 16 bits, 0 excluded. */
const MAX_IN_FLIGHT = 65_535;

interface Settle {
  resolve: () => void;
  reject: (err: Error) => void;
}

export class LeanPublisher {
  private readonly acks = new Map<number, Settle>();
  /** Messages waiting for a free packet identifier (more than MAX_IN_FLIGHT sent at once). */
  private readonly queued: Settle[] = [];
  private nextId = 1;
  private corked = false;
  private failure: Error | undefined;
  private pending: Buffer = Buffer.alloc(0);

  private constructor(private readonly socket: Socket) {}

  /** Connects and logs in; resolves on a CONNACK that accepts the connection. */
  static connect(
    url: string,
    login: { clientId: string; username: string; password: string },
  ): Promise<LeanPublisher> {
    const target = new URL(url);
    const tls = target.protocol === 'mqtts:';
    const port = Number(target.port) || (tls ? 8883 : 1883);
    const host = target.hostname.replace(/^\[|\]$/g, '');
    const socket = tls ? connectTls({ host, port, rejectUnauthorized: false }) : connectTcp({ host, port });
    socket.setNoDelay(true);
    const publisher = new LeanPublisher(socket);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => fail(new Error(`no CONNACK from ${url}`)), 10_000);
      const fail = (err: Error) => {
        clearTimeout(timer);
        socket.destroy();
        reject(err);
      };
      socket.once('error', fail);
      socket.once('close', () => fail(new Error(`${url} closed the connection before CONNACK`)));
      socket.once('data', (chunk: Buffer) => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        socket.removeAllListeners('close');
        if (chunk[0] !== CONNACK || chunk[3] !== 0) {
          fail(new Error(`${url} refused the connection (CONNACK return code ${chunk[3]})`));
          return;
        }
        publisher.listen(chunk.subarray(4));
        resolve(publisher);
      });
      socket.write(
        mqttPacket.generate({
          cmd: 'connect',
          protocolId: 'MQTT',
          protocolVersion: 4,
          clean: true,
          keepalive: 0,
          clientId: login.clientId,
          username: login.username,
          password: Buffer.from(login.password),
        }),
      );
    });
  }

  private listen(rest: Buffer): void {
    this.socket.on('data', (chunk: Buffer) => this.received(chunk));
    this.socket.on('error', (err) => this.fail(err));
    this.socket.on('close', () => this.fail(new Error('the broker closed the connection')));
    if (rest.length > 0) this.received(rest);
  }

  /** The broker sends this client PUBACKs alone (4 bytes each). */
  private received(chunk: Buffer): void {
    const data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    let at = 0;
    for (; at + 4 <= data.length; at += 4) {
      if (data[at] !== PUBACK || data[at + 1] !== 2) {
        this.fail(new Error(`unexpected packet type 0x${data[at]!.toString(16)} from the broker`));
        return;
      }
      const id = data.readUInt16BE(at + 2);
      const ack = this.acks.get(id);
      if (!ack) continue;
      this.acks.delete(id);
      ack.resolve();
      this.queued.shift()?.resolve();
    }
    this.pending = data.subarray(at);
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    // The messages waiting for an identifier fail too: nothing would ever free one.
    for (const waiting of [...this.acks.values(), ...this.queued]) waiting.reject(err);
    this.acks.clear();
    this.queued.length = 0;
    this.socket.destroy();
  }

  /** Sends `message` and resolves when the broker acknowledges it. */
  publish(message: PreparedPublish): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.acks.size >= MAX_IN_FLIGHT) {
      return new Promise<void>((resolve, reject) => this.queued.push({ resolve, reject })).then(() =>
        this.publish(message),
      );
    }
    let id = this.nextId;
    while (this.acks.has(id)) id = (id % MAX_IN_FLIGHT) + 1;
    this.nextId = (id % MAX_IN_FLIGHT) + 1;
    const done = new Promise<void>((resolve, reject) => this.acks.set(id, { resolve, reject }));
    // Each prepared packet is sent once, so its identifier can be written in place.
    message.bytes.writeUInt16BE(id, message.idAt);
    // The messages sent in one turn of the event loop leave in one write.
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    this.socket.write(message.bytes);
    return done;
  }

  /** Sends DISCONNECT and closes the connection. */
  async end(): Promise<void> {
    if (this.socket.destroyed) return;
    await new Promise<void>((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.end(mqttPacket.generate({ cmd: 'disconnect' }));
    });
  }
}
