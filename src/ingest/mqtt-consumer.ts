import { connect, type IPublishPacket, type MqttClient } from 'mqtt';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { counted, FAILURE_LOG_INTERVAL_MS, LogThrottle } from '../log-throttle.js';
import { hideUserInfo } from '../url-user-info.js';
import type { DirectoryChange } from './directory.js';
import { IN_FLIGHT, Limiter, sleep } from './limiter.js';
import type { ConsumerStats, MqttConsumerOptions } from './mqtt-consumer-options.js';
import type { IngestOutcome } from './outcome.js';
import { SessionTakeoverWatch } from './session-takeover.js';

/**
 * Passed to mqtt.js's handleMessage callback so that it reads the next packet without
 * sending the PUBACK itself; the consumer sends it once the message is stored. See
 * `deferAcks` below for why.
 */
const DEFERRED = Object.freeze(new Error('acknowledged by the ingest consumer after commit'));

type PacketSender = { _sendPacket(packet: { cmd: 'puback'; messageId: number }, cb: () => void): void };

/**
 * Consumes reader messages from an MQTT broker and acknowledges each QoS 1 message only
 * after IngestService.readerMessage committed it.
 *
 * mqtt.js acknowledges a QoS 1 PUBLISH when its handleMessage callback returns, and
 * reads the next packet only after that: waiting there for the commit would store one
 * message at a time. (customHandleAcks has the same limit and works only over MQTT 5,
 * which the embedded Aedes broker does not speak.) So handleMessage returns at once
 * with DEFERRED, which makes mqtt.js skip its PUBACK, and the consumer writes the PUBACK
 * itself once the transaction committed; at most `concurrency` messages (and
 * `maxInFlightBytes` of payload) are in flight, and handleMessage waits for room, which
 * pushes back on the broker through TCP. The messages in flight are committed in groups
 * (IngestService.readerMessage), so many in flight cost few transactions.
 *
 * Acknowledgements go out in completion order. A message that cannot be stored is not
 * acknowledged: after the messages in flight have settled the consumer reconnects, and
 * the broker delivers every unacknowledged message of the persistent session again.
 * A PUBACK is only ever sent on the connection the message arrived on.
 */
export class MqttConsumer {
  private client: MqttClient | undefined;
  private readonly limiter: Limiter;
  private readonly throttle = new LogThrottle();
  /** Failures to store come by the message in an outage: their lines once a second. */
  private readonly failures = new LogThrottle(FAILURE_LOG_INTERVAL_MS);
  /** Bumped whenever the connection goes away; messages of an older one are not acknowledged. */
  private connection = 0;
  private subscribed = new Set<string>();
  private stopping = false;
  private draining: Promise<void> | undefined;
  private redeliveryTimer: NodeJS.Timeout | undefined;
  private redeliveryBackoffMs = 1_000;
  private readonly stopSignal = new AbortController();
  private unsubscribeDirectory: (() => void) | undefined;
  private readonly readyWaiters: Array<() => void> = [];
  private readonly attemptWaiters: Array<(ok: boolean) => void> = [];
  private isReady = false;
  private takeover: SessionTakeoverWatch | undefined;
  readonly stats: ConsumerStats = {
    stored: 0,
    failed: 0,
    unrouted: 0,
    leftoversDropped: 0,
    retainedDropped: 0,
  };

  constructor(private readonly options: MqttConsumerOptions) {
    this.limiter = new Limiter(
      options.concurrency ?? IN_FLIGHT.messages,
      options.maxInFlightBytes ?? IN_FLIGHT.bytes,
    );
  }

  /** The filter subscribed for a reader topic. */
  filterFor(topic: string): string {
    return this.options.sharedGroup ? `$share/${this.options.sharedGroup}/${topic}` : topic;
  }

  /** Starts connecting (and reconnecting) in the background; see ready(). */
  start(): void {
    if (this.client) return;
    const { url, clientId, logger } = this.options;
    const client = connect(url, {
      clientId,
      protocolVersion: 4,
      // A persistent session: QoS 1 messages for our subscriptions are queued while we are away.
      clean: false,
      keepalive: 30,
      connectTimeout: 10_000,
      reconnectPeriod: 2_000,
      // Subscriptions are ours to manage (the set of readers changes while we run).
      resubscribe: false,
      ...this.options.clientOptions,
    });
    if (typeof (client as unknown as Partial<PacketSender>)._sendPacket !== 'function') {
      client.end(true);
      throw new Error(
        'this mqtt.js version has no _sendPacket; the consumer cannot acknowledge after commit',
      );
    }
    this.client = client;
    const takeover = new SessionTakeoverWatch(clientId, logger);
    this.takeover = takeover;
    client.handleMessage = (packet, callback) => this.receive(packet, callback);
    client.on('connect', (connack) => {
      takeover.accepted();
      logger.info(
        { url: hideUserInfo(url), clientId, sessionPresent: connack.sessionPresent },
        'MQTT consumer connected',
      );
      this.subscribed = new Set();
      void this.syncSubscriptions(this.options.directory.topics(), []).then(() => this.markReady());
    });
    client.on('close', () => {
      takeover.closed();
      this.connection++;
      this.subscribed = new Set();
      this.attemptFailed();
    });
    client.on('error', (err) => {
      this.attemptFailed();
      this.throttle.maybe('connection-error', (suppressed) =>
        logger.warn(
          { err: err.message, url: hideUserInfo(url), suppressed },
          'MQTT consumer connection error; retrying',
        ),
      );
    });
    this.unsubscribeDirectory = this.options.directory.onChange((change: DirectoryChange) => {
      void this.syncSubscriptions(change.added, change.removed);
    });
  }

  /** Resolves once connected and subscribed to every reader topic known at that time. */
  ready(): Promise<void> {
    if (this.isReady) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  /** true once ready(), false if the first connection attempt fails before that. */
  firstAttempt(): Promise<boolean> {
    if (this.isReady) return Promise.resolve(true);
    return new Promise((resolve) => this.attemptWaiters.push(resolve));
  }

  private attemptFailed(): void {
    if (!this.isReady) for (const resolve of this.attemptWaiters.splice(0)) resolve(false);
  }

  /** Whether the topic's subscription is in place on the current connection. */
  isSubscribed(topic: string): boolean {
    return this.subscribed.has(topic);
  }

  get connected(): boolean {
    return this.client?.connected ?? false;
  }

  /**
   * Stops taking messages, waits for those in flight to be stored and acknowledged, and
   * disconnects; the broker keeps the session for the next start.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.stopSignal.abort();
    clearTimeout(this.redeliveryTimer);
    this.unsubscribeDirectory?.();
    await this.limiter.idle();
    await this.draining;
    const client = this.client;
    if (!client) return;
    this.takeover?.ownClose();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => client.end(true, () => resolve()), 5_000);
      client.end(false, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private markReady(): void {
    if (this.isReady) return;
    this.isReady = true;
    for (const resolve of this.readyWaiters.splice(0)) resolve();
    for (const resolve of this.attemptWaiters.splice(0)) resolve(true);
  }

  private async syncSubscriptions(added: string[], removed: string[]): Promise<void> {
    const client = this.client;
    if (!client?.connected || this.stopping) return;
    const connection = this.connection;
    const { logger } = this.options;
    const toAdd = added.filter((t) => !this.subscribed.has(t));
    const toRemove = removed.filter((t) => this.subscribed.has(t));
    try {
      if (toRemove.length > 0) {
        await client.unsubscribeAsync(toRemove.map((t) => this.filterFor(t)));
        for (const t of toRemove) this.subscribed.delete(t);
      }
      if (toAdd.length > 0) {
        const granted = await client.subscribeAsync(
          toAdd.map((t) => this.filterFor(t)),
          { qos: 1 },
        );
        if (connection !== this.connection) return; // reconnected meanwhile: 'connect' subscribes again
        for (const [i, topic] of toAdd.entries()) {
          const grant = granted[i];
          if (grant && grant.qos !== 128) this.subscribed.add(topic);
          else logger.error({ topic: this.filterFor(topic) }, 'the broker refused the subscription');
        }
        logger.debug({ topics: toAdd.length }, 'subscribed to reader topics');
      }
    } catch (err) {
      // Disconnected in between: the next 'connect' subscribes to everything again.
      logger.warn({ err }, 'changing MQTT subscriptions failed; retrying on reconnect');
    }
  }

  /** mqtt.js handleMessage: take a slot, start storing, let the next packet in. */
  private receive(packet: IPublishPacket, callback: (error?: Error) => void): void {
    const receivedAt = Date.now();
    const connection = this.connection;
    if (this.stopping) {
      callback(DEFERRED); // not acknowledged: the broker delivers it again next session
      return;
    }
    // While reconnecting for redelivery, hold new messages back so the ones in flight can settle.
    const paused = this.draining ?? Promise.resolve();
    const weight = packet.payload.length;
    paused
      .then(() => this.limiter.acquire(weight))
      .then(
        () => {
          if (this.stopping || connection !== this.connection) {
            this.limiter.release(weight);
            callback(DEFERRED);
            return;
          }
          this.handle(packet, receivedAt, connection)
            .catch((err: unknown) =>
              // handle() settles every expected failure itself; this is the last line against a crash.
              this.options.logger.error({ err, topic: packet.topic }, 'handling an MQTT message failed'),
            )
            .finally(() => this.limiter.release(weight));
          callback(DEFERRED);
        },
        () => callback(DEFERRED),
      )
      .catch((err: unknown) => this.options.logger.error({ err }, 'taking an MQTT message failed'));
  }

  private async handle(packet: IPublishPacket, receivedAt: number, connection: number): Promise<void> {
    const { directory, ingest, logger } = this.options;
    // MQTT 3.1.1 (3.3.1.3): a message forwarded to an established subscription has its
    // retain flag cleared; set, it is a retained message the broker replays to a new
    // subscription, that is on every reconnect of ours. Its reads were made when it was
    // first published (and stored then, if we were listening): stored again, a message
    // without reader times would move last-seen to now, and any message would be counted
    // again. The embedded broker retains nothing a reader sends; an external broker might.
    if (packet.retain) {
      this.stats.retainedDropped++;
      this.throttle.maybe(`retained:${packet.topic}`, (suppressed) =>
        logger.warn(
          { topic: packet.topic, suppressed },
          'retained message replayed by the broker dropped (set retain_available false in mosquitto.conf)',
        ),
      );
      this.ack(packet, connection);
      return;
    }
    const reader = directory.lookup(packet.topic);
    if (!reader) {
      // Left over in the session from a reader deleted since: nothing to store it under.
      this.stats.unrouted++;
      this.throttle.maybe(`unrouted:${packet.topic}`, (suppressed) =>
        logger.warn({ topic: packet.topic, suppressed }, 'message on a topic of no live reader dropped'),
      );
      this.ack(packet, connection);
      // Our persistent session may still hold the subscription of a reader deleted while we were down.
      if (!this.subscribed.has(packet.topic)) {
        const topic = packet.topic;
        this.client?.unsubscribe(this.filterFor(topic), (err) => {
          if (!err) this.stats.leftoversDropped++;
          // A reader created on that topic meanwhile: subscribe again.
          if (directory.lookup(topic)) {
            this.subscribed.delete(topic);
            void this.syncSubscriptions([topic], []);
          }
        });
      }
      return;
    }
    const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
    const delays = this.options.retryDelaysMs ?? [250, 1_000];
    for (let attempt = 0; ; attempt++) {
      let outcome: IngestOutcome;
      try {
        outcome = await ingest.readerMessage(reader, payload, 'mqtt', receivedAt);
      } catch (err) {
        const delay = delays[attempt];
        if (delay === undefined || this.stopping) {
          this.stats.failed++;
          this.options.instruments?.messageFailed({ family: reader.family, source: 'mqtt' });
          this.failures.maybe('failed', (suppressed) =>
            logger.error(
              {
                err,
                readerId: reader.id,
                topic: packet.topic,
                attempts: attempt + 1,
                ...counted(suppressed),
              },
              'storing a reader message failed; left unacknowledged for the broker to deliver again',
            ),
          );
          this.scheduleRedelivery(isDatabaseUnavailable(err));
          return;
        }
        this.failures.maybe('retrying', (suppressed) =>
          logger.warn(
            { err, readerId: reader.id, attempt: attempt + 1, ...counted(suppressed) },
            'storing a reader message failed; retrying',
          ),
        );
        await sleep(delay);
        continue;
      }
      this.stats.stored++;
      this.redeliveryBackoffMs = 1_000;
      if (outcome.errors.length > 0) {
        this.throttle.maybe(`bad:${reader.id}`, (suppressed) =>
          logger.warn(
            { readerId: reader.id, bad: outcome.bad, errors: outcome.errors.slice(0, 5), suppressed },
            'reader message had bad reads (kept in the raw log)',
          ),
        );
      }
      this.ack(packet, connection);
      return;
    }
  }

  private ack(packet: IPublishPacket, connection: number): void {
    const client = this.client;
    if (packet.qos === 0 || packet.messageId === undefined || !client) return;
    // On a newer connection the broker delivers the message again; an old id means nothing there.
    if (connection !== this.connection || !client.connected) return;
    try {
      (client as unknown as PacketSender)._sendPacket(
        { cmd: 'puback', messageId: packet.messageId },
        () => undefined,
      );
    } catch (err) {
      // The broker delivers it again on the next connection.
      this.options.logger.warn({ err, messageId: packet.messageId }, 'sending a PUBACK failed');
    }
  }

  /**
   * Unacknowledged messages come back only on a new connection (MQTT 3.1.1 and 5 both
   * redeliver on session resumption), so reconnect once the messages in flight settled.
   */
  private scheduleRedelivery(outage: boolean): void {
    if (this.redeliveryTimer || this.stopping) return;
    const waitForDatabase = outage ? this.options.databaseAvailable : undefined;
    // During an outage the database's return paces the retries, not the backoff.
    const delay = waitForDatabase ? 0 : this.redeliveryBackoffMs;
    if (!waitForDatabase) this.redeliveryBackoffMs = Math.min(this.redeliveryBackoffMs * 2, 60_000);
    this.redeliveryTimer = setTimeout(() => {
      this.redeliveryTimer = undefined;
      if (this.stopping || this.draining) return;
      this.draining = (async () => {
        await this.limiter.idle();
        if (waitForDatabase) {
          this.options.logger.warn(
            {},
            'database unavailable; reader messages wait in the broker until it is back',
          );
          await waitForDatabase(this.stopSignal.signal);
        }
        if (this.stopping || !this.client) return;
        this.options.logger.info(
          {},
          'reconnecting so that the broker delivers unacknowledged messages again',
        );
        this.connection++;
        this.takeover?.ownClose();
        this.client.reconnect();
      })().finally(() => {
        this.draining = undefined;
      });
    }, delay);
    this.redeliveryTimer.unref();
  }
}
