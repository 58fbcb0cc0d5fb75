import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { Aedes, type AedesOptions } from 'aedes';
import { hostUnusable } from '../listen-errors.js';
import { type BrokerAccess, SERVICE_USERNAME } from './broker-access.js';
import { BROKER_CONNECTION_LIMITS, type BrokerConnectionLimits, ConnectionGate } from './connection-gate.js';
import {
  limitPacketSize,
  MQTT_PACKET_LIMITS,
  type MqttPacketLimits,
  PacketTooLargeError,
} from './packet-limit.js';
import { SocketBudget, type SocketBufferPolicy } from './socket-budget.js';

/**
 * The MQTT broker the service runs itself when no `MQTT_URL` is configured, so a reader
 * can publish to the service directly on a single machine. MQTT over TCP, every client
 * logging in (`access`, src/ingest/broker-access.ts), in-memory persistence: it is the
 * one-machine default; several instances share an external broker instead.
 */
export interface EmbeddedBroker {
  /** `mqtt://host:port` with the port actually bound (useful with port 0). */
  url: string;
  port: number;
  /** `mqtts://host:port` of the TLS listener, when there is one. */
  tlsUrl?: string;
  /** Whether it accepts connections (for /readyz). */
  readonly listening: boolean;
  /** The read buffer of each open connection, in bytes (./socket-budget.ts). */
  socketBuffers(): number[];
  /** Serves another certificate on the TLS listener to the connections that open from now on. */
  replaceCertificate(pair: { cert: Buffer; key: Buffer }): void;
  /**
   * While on, a new connection is closed as it opens: the service waits for another
   * process's database (docs/operations.md), for as long as that one runs, and a reader
   * must not hang on a CONNECT nobody answers; closed, it reconnects later (a refused
   * CONNACK makes many clients give up for good). Port taken early, readers kept out.
   */
  closeNewConnections(on: boolean): void;
  /** Stops accepting, disconnects every client, and resolves once all sockets are closed. */
  stop(): Promise<void>;
}

export class BrokerPortInUseError extends Error {
  constructor(readonly port: number) {
    super(
      `port ${port} is in use; set TAGTRAIL_MQTT_PORT to another port (or MQTT_URL to use an external broker)`,
    );
    this.name = 'BrokerPortInUseError';
  }
}

const hostForUrl = (host: string) => (host.includes(':') ? `[${host}]` : host);

export interface EmbeddedBrokerOptions {
  host: string;
  port: number;
  /**
   * Called for every PUBLISH from a client before the broker acknowledges it (PUBACK) or
   * forwards it; `done(null)` lets it through. `done(err)` refuses the message: the broker
   * drops that client's connection without acknowledging, so the publisher sends it again
   * after reconnecting. Ingest uses this to acknowledge a reader's message only once it is
   * stored. `sender` is the reader the connection logged in as (undefined without `access`),
   * so that ingest never takes a message as another reader's than the one that sent it.
   */
  onPublish?: (
    topic: string,
    payload: Buffer,
    sender: number | undefined,
    done: (err: Error | null) => void,
  ) => void;
  /**
   * Who may connect, publish and subscribe. The service always passes it; without it the
   * broker is open to anyone, which only tests use (as a stand-in for an external broker
   * that allows anonymous clients, like the machine's Mosquitto).
   */
  access?: BrokerAccess;
  /** An MQTTS listener besides the plain one, so credentials need not cross the network in clear. */
  tls?: { cert: Buffer; key: Buffer; port: number };
  /** Each reader socket's read buffer (default READER_SOCKET_BUFFER). */
  socketBuffer?: SocketBufferPolicy;
  /** The largest packets taken (default MQTT_PACKET_LIMITS, ./packet-limit.ts). */
  packetLimits?: MqttPacketLimits;
  /**
   * A logged-in reader sent a packet over the limit, and its connection is being closed:
   * for the reader's health, which would otherwise show a reader reconnecting for no reason.
   */
  onRefusedPacket?: (sender: number, error: PacketTooLargeError) => void;
  /** How many connections are held, and how long one may take to log in (./connection-gate.ts). */
  connectionLimits?: Partial<BrokerConnectionLimits>;
}

/**
 * QoS 2 messages of one connection the broker keeps awaiting their PUBREL (aedes's default
 * is 1000): each is kept whole, up to MQTT_PACKET_LIMITS.other, until the client releases
 * it, so the default let one connection hold 8 GB. Clients keep 10-20 in flight (Paho,
 * Mosquitto); one that leaves more unreleased is closed. Readers should use QoS 1 anyway.
 */
export const QOS2_AWAITING_RELEASE = 32;

/**
 * After how long without traffic the kernel starts probing a broker connection (TCP
 * keepalive). MQTT's own keepalive is the client's to choose, and 0 turns it off: such a
 * reader that dies without a FIN (power cut, cellular drop) leaves a half-open connection
 * that would hold its slots of the connection limits (./connection-gate.ts) for ever. The
 * kernel's probes find the dead peer and the socket closes (probes every
 * net.ipv4.tcp_keepalive_intvl, given up after tcp_keepalive_probes unanswered: 75 s and 9
 * by default, so about 12 minutes after it went quiet). A live peer's kernel answers the
 * probes itself, whatever its MQTT keepalive.
 */
export const BROKER_TCP_KEEPALIVE_MS = 60_000;

/**
 * The Aedes hooks for `access` and `onPublish`. A login must be answered within
 * `loginTimeoutMs` (the connect timeout, which aedes stops once the CONNECT has arrived).
 */
function brokerHooks(options: EmbeddedBrokerOptions, loginTimeoutMs: number): AedesOptions {
  const { onPublish, access } = options;
  const hooks: AedesOptions = {};
  if (access) {
    hooks.authenticate = (client, username, password, callback) => {
      // A login waits for the database (the readers before the service has loaded them, a
      // reader not known yet): unreachable or slow, it would hold the reader, and its slots
      // of the connection limits, for as long as that lasts. Closed, not refused, like a
      // connection while the service waits for another process's database (see
      // closeNewConnections): the reader reconnects later, where a refused CONNACK makes
      // many clients give up for good. Aedes ignores the login's answer once closed.
      const login = new AbortController();
      const timer = setTimeout(() => {
        login.abort(new Error(`login not answered within ${loginTimeoutMs} ms`));
        client.close();
      }, loginTimeoutMs);
      timer.unref();
      access.authenticate(client, username, password, login.signal).then(
        () => {
          clearTimeout(timer);
          callback(null, true);
        },
        (err: Error & { returnCode?: number }) => {
          clearTimeout(timer);
          // Aedes answers CONNACK with err.returnCode (5, not authorized, when there is none).
          callback(Object.assign(err, { returnCode: err.returnCode ?? 5 }) as never, false);
        },
      );
    };
    // Every reader gets a clean session, whatever it asks: a persistent one would keep its
    // QoS 2 messages awaiting PUBREL, its subscription and what queues for it after the
    // connection ends, under each client id it ever used (any `reader-<id>-<suffix>`), so
    // one reader could grow the broker's memory without bound. A reader needs no session:
    // its messages are stored as they arrive, and it may subscribe only to its own topic.
    hooks.preConnect = (_client, packet, callback) => {
      if (packet.username !== SERVICE_USERNAME) packet.clean = true;
      callback(null, true);
    };
    hooks.authorizeSubscribe = (client, subscription, callback) =>
      // null refuses this one filter (SUBACK 0x80) and keeps the connection.
      callback(null, client && access.maySubscribe(client, subscription.topic) ? subscription : null);
  }
  if (access || onPublish) {
    hooks.authorizePublish = (client, packet, callback) => {
      if (!client) return callback(null);
      // MQTT 3.1.1 cannot refuse one PUBLISH: the broker closes the connection without an
      // acknowledgement, and nothing is stored or forwarded.
      if (access && !access.mayPublish(client, packet.topic)) {
        return callback(new Error(`not authorized to publish to ${packet.topic}`));
      }
      // Nothing a reader sends is retained (its will included): a retained message outlives
      // the reader's hold on the topic, and would be handed to whoever is given the topic
      // next, another organization's reader maybe. Ingest takes messages here, not from a
      // subscription, so it never needs one.
      if (access) packet.retain = false;
      if (!onPublish) return callback(null);
      const payload = packet.payload;
      onPublish(
        packet.topic,
        Buffer.isBuffer(payload) ? payload : Buffer.from(payload),
        access?.readerOf(client),
        callback,
      );
    };
  }
  return hooks;
}

export async function startEmbeddedBroker(options: EmbeddedBrokerOptions): Promise<EmbeddedBroker> {
  const limits = { ...BROKER_CONNECTION_LIMITS, ...options.connectionLimits };
  const aedes = await Aedes.createBroker({
    ...brokerHooks(options, limits.connectTimeoutMs),
    connectTimeout: limits.connectTimeoutMs,
    maxInflightInbound: QOS2_AWAITING_RELEASE,
  });
  const gate = new ConnectionGate(limits);
  const { access } = options;
  if (access) aedes.on('clientDisconnect', (client) => access.forget(client));
  const { onRefusedPacket } = options;
  if (access && onRefusedPacket) {
    // Emitted before the connection closes, while the client is still known as its reader.
    aedes.on('clientError', (client, err) => {
      const sender = err instanceof PacketTooLargeError ? access.readerOf(client) : undefined;
      if (sender !== undefined) onRefusedPacket(sender, err as PacketTooLargeError);
    });
  }
  // Each reader's read buffer, sized as it connects (./socket-budget.ts).
  const budget = new SocketBudget(options.socketBuffer);
  let closing = false;
  const handle = (socket: Socket) => {
    // Refused connections are closed unanswered, like a full server's: MQTT 3.1.1 has no
    // CONNACK code for it, and answering would mean reading their CONNECT first.
    if (closing || !gate.admit(socket)) {
      socket.destroy();
      return;
    }
    budget.add(socket);
    limitPacketSize(aedes.handle(socket), options.packetLimits ?? MQTT_PACKET_LIMITS);
  };
  // Set by Node on each TCP connection as it is accepted (on the TLS listener too, before its handshake).
  const tcp = { keepAlive: true, keepAliveInitialDelay: BROKER_TCP_KEEPALIVE_MS };
  const server = createServer(tcp, handle);
  // TLS sockets reach Aedes once the handshake is done; a failed handshake never does.
  const tlsServer = options.tls
    ? createTlsServer({ ...tcp, cert: options.tls.cert, key: options.tls.key }, handle)
    : undefined;
  budget.attach(server);
  if (tlsServer) budget.attach(tlsServer);
  const closeAedes = () => new Promise<void>((resolve) => aedes.close(() => resolve()));
  const listen = (srv: Server, port: number) =>
    new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen({ port, host: options.host }, () => {
        srv.off('error', reject);
        resolve();
      });
    });
  const boundPort = (srv: Server, fallback: number) => {
    const address = srv.address();
    return typeof address === 'object' && address ? address.port : fallback;
  };

  try {
    await listen(server, options.port);
  } catch (err) {
    await closeAedes();
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new BrokerPortInUseError(options.port);
    throw hostUnusable(err, options.host) ?? err;
  }
  if (tlsServer && options.tls) {
    try {
      await listen(tlsServer, options.tls.port);
    } catch (err) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await closeAedes();
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        throw new Error(`port ${options.tls.port} is in use; set TAGTRAIL_MQTTS_PORT to another port`);
      }
      throw err;
    }
  }

  const port = boundPort(server, options.port);
  const tlsPort = tlsServer && options.tls ? boundPort(tlsServer, options.tls.port) : undefined;
  let stopping: Promise<void> | undefined;
  return {
    url: `mqtt://${hostForUrl(options.host)}:${port}`,
    port,
    ...(tlsPort === undefined ? {} : { tlsUrl: `mqtts://${hostForUrl(options.host)}:${tlsPort}` }),
    get listening() {
      return server.listening && !stopping;
    },
    socketBuffers: () => [...budget.open].map((socket) => socket.readableHighWaterMark),
    closeNewConnections(on) {
      closing = on;
    },
    replaceCertificate(pair) {
      if (!tlsServer) throw new Error('the embedded broker has no TLS listener');
      tlsServer.setSecureContext({ cert: pair.cert, key: pair.key });
    },
    stop() {
      stopping ??= (async () => {
        const closed = Promise.all(
          [server, tlsServer].map(
            (srv) =>
              new Promise<void>((resolve) => (srv?.listening ? srv.close(() => resolve()) : resolve())),
          ),
        );
        await closeAedes();
        // aedes ends its clients' streams; whatever is still open (a half-open TCP
        // connection that never sent CONNECT) must not hold the shutdown up.
        for (const socket of budget.open) socket.destroy();
        await closed;
      })();
      return stopping;
    },
  };
}
