import { counted, FAILURE_LOG_INTERVAL_MS, LogThrottle } from '../log-throttle.js';
import type { ReaderDirectory, ReaderRef } from './directory.js';
import type { Settle } from './group-commit.js';
import type { IngestInstruments } from './instruments.js';
import { IN_FLIGHT, type IngestLogger, Limiter, type SlotWaiter } from './limiter.js';
import type { IngestOutcome } from './outcome.js';
import type { IngestService } from './service.js';

export interface BrokerIngestTarget {
  directory: ReaderDirectory;
  ingest: Pick<IngestService, 'takeReaderMessage'> & Partial<Pick<IngestService, 'refusedMessage'>>;
  logger: IngestLogger;
  /** Messages taken in and not yet stored, at most. Default IN_FLIGHT.messages. */
  concurrency?: number;
  /** Their payload bytes, at most. Default IN_FLIGHT.bytes. */
  maxInFlightBytes?: number;
  retryDelaysMs?: number[];
  /** Where messages that could not be stored are counted (docs/metrics.md). */
  instruments?: Pick<IngestInstruments, 'messageFailed'>;
}

export class IngestUnavailableError extends Error {
  constructor(message = 'ingest is not accepting messages') {
    super(message);
    this.name = 'IngestUnavailableError';
  }
}

/** A reader published to a topic that is not its own now (changed since it logged in). */
export class NotReaderTopicError extends Error {
  constructor(readerId: number, topic: string) {
    super(`reader ${readerId} may not publish to ${topic}: it is not its topic`);
    this.name = 'NotReaderTopicError';
  }
}

/** The broker's answer to one PUBLISH: null acknowledges it, an error refuses it. */
export type PublishDone = (err: Error | null) => void;

type Attached = BrokerIngestTarget & { limiter: Limiter };

const asError = (err: unknown) => (err instanceof Error ? err : new Error(String(err)));

/**
 * Ingest inside the embedded broker: the broker calls `take` for every PUBLISH before
 * it acknowledges it, so a reader's QoS 1 message is acknowledged only once it is
 * stored, and a message the service could not store is never acknowledged (the broker
 * drops the reader's connection and the reader sends it again after reconnecting).
 * A consumer subscribed to the embedded broker could not promise that: the broker
 * acknowledges the reader on receipt and keeps undelivered messages only in memory.
 *
 * The broker starts before the database, so messages wait in `take` until `attach`
 * supplies the reader directory and the ingest service.
 */
export class BrokerIngest {
  private target: Attached | undefined;
  private readonly attachWaiters: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  private stopped = false;
  readonly throttle = new LogThrottle();
  /** Failures to store come by the message in an outage: their lines once a second. */
  readonly failures = new LogThrottle(FAILURE_LOG_INTERVAL_MS);
  readonly stats = { stored: 0, failed: 0 };
  /** Refused packets recorded per reader (refused()). */
  private readonly refusals = new LogThrottle(60_000);

  /** Whether close() was called: nothing new is taken in. */
  get closed(): boolean {
    return this.stopped;
  }

  attach(target: BrokerIngestTarget): void {
    if (this.stopped) throw new IngestUnavailableError();
    this.target = {
      ...target,
      limiter: new Limiter(
        target.concurrency ?? IN_FLIGHT.messages,
        target.maxInFlightBytes ?? IN_FLIGHT.bytes,
      ),
    };
    for (const w of this.attachWaiters.splice(0)) w.resolve();
  }

  /**
   * The broker's publish hook: `done(null)` once the message is stored (or at once when
   * the topic is not a reader's), `done(err)` to refuse it. `sender` is the reader whose
   * connection published (undefined: not known, the topic alone decides). A callback and one object per
   * message (BrokerMessage), not a chain of promises: with one read per message, thousands
   * wait for their commit at a time, and what each keeps alive is the collector's work.
   */
  take(topic: string, payload: Buffer, sender: number | undefined, done: PublishDone): void {
    const receivedAt = Date.now();
    if (this.target) {
      this.admit(this.target, topic, payload, sender, receivedAt, done);
      return;
    }
    if (this.stopped) {
      done(new IngestUnavailableError());
      return;
    }
    this.attachWaiters.push({
      resolve: () => this.admit(this.target!, topic, payload, sender, receivedAt, done),
      reject: done,
    });
  }

  /** Takes a slot of the in-flight bound (waiting for one when they are taken), then stores. */
  private admit(
    target: Attached,
    topic: string,
    payload: Buffer,
    sender: number | undefined,
    receivedAt: number,
    done: PublishDone,
  ): void {
    if (this.stopped) {
      done(new IngestUnavailableError());
      return;
    }
    let reader: ReaderRef | undefined;
    try {
      reader = target.directory.lookup(topic);
    } catch (err) {
      done(asError(err));
      return;
    }
    // Access control let the sender publish here, but as of its login, or of a directory
    // that has moved on while the message waited: a topic changed since may be another
    // organization's reader's now, and the reads must not be taken as that reader's.
    if (sender !== undefined && reader?.id !== sender) {
      this.throttle.maybe(`foreign:${sender}`, (suppressed) =>
        target.logger.warn(
          { readerId: sender, topic, suppressed },
          'reader published to a topic that is not its own now; refused, connection closed',
        ),
      );
      done(new NotReaderTopicError(sender, topic));
      return;
    }
    if (!reader) {
      done(null); // not a reader's topic: an ordinary message for whoever subscribed
      return;
    }
    target.limiter.wait(new BrokerMessage(this, target, reader, topic, payload, receivedAt, done));
  }

  /**
   * The broker refused a packet of reader `sender` (over the size limit) and closes its
   * connection: recorded in the reader's health, once the service is attached. At most once
   * a minute per reader: a reader resends an unacknowledged QoS 1 message at each
   * reconnect, and each would be one more raw log row saying the same.
   */
  refused(sender: number, reason: string): void {
    const target = this.target;
    if (!target?.ingest.refusedMessage) return;
    const { ingest, logger } = target;
    const login = target.directory.login(sender);
    const reader = login && target.directory.lookup(login.topic);
    if (!reader || reader.id !== sender) return;
    this.refusals.maybe(String(sender), (suppressed) => {
      const again = suppressed > 0 ? ` (and ${suppressed} more since the last one recorded)` : '';
      ingest.refusedMessage!(reader, 'mqtt', Date.now(), `${reason}${again}`).catch((err: unknown) =>
        logger.warn({ err, readerId: sender }, 'recording a refused MQTT packet failed'),
      );
    });
  }

  /** Refuses new messages and waits for those being stored. */
  async close(): Promise<void> {
    this.stopped = true;
    for (const w of this.attachWaiters.splice(0)) w.reject(new IngestUnavailableError());
    await this.target?.limiter.idle();
  }
}

/**
 * One reader message from its in-flight slot to the broker's answer: it waits for the slot
 * (SlotWaiter), is stored (Settle of the ingest service), and is retried after each delay
 * of `retryDelaysMs` while storing fails. It holds its slot until it is stored or given up.
 */
class BrokerMessage implements SlotWaiter, Settle<IngestOutcome> {
  readonly weight: number;
  private attempt = 0;

  constructor(
    private readonly hook: BrokerIngest,
    private readonly target: Attached,
    private readonly reader: ReaderRef,
    private readonly topic: string,
    private readonly payload: Buffer,
    private readonly receivedAt: number,
    private readonly done: PublishDone,
  ) {
    this.weight = payload.byteLength;
  }

  /** Its slot is taken: the first attempt, unless a stop came while it waited. */
  granted(): void {
    if (this.hook.closed) {
      this.target.limiter.release(this.weight);
      this.done(new IngestUnavailableError());
      return;
    }
    this.store();
  }

  private store(): void {
    try {
      this.target.ingest.takeReaderMessage(this.reader, this.payload, 'mqtt', this.receivedAt, this);
    } catch (err) {
      this.reject(err);
    }
  }

  resolve(outcome: IngestOutcome): void {
    const { target, reader } = this;
    target.limiter.release(this.weight);
    this.hook.stats.stored++;
    if (outcome.errors.length > 0) {
      this.hook.throttle.maybe(`bad:${reader.id}`, (suppressed) =>
        target.logger.warn(
          { readerId: reader.id, bad: outcome.bad, errors: outcome.errors.slice(0, 5), suppressed },
          'reader message had bad reads (kept in the raw log)',
        ),
      );
    }
    this.done(null);
  }

  reject(err: unknown): void {
    const { target, reader } = this;
    // After a stop a failed attempt is not retried (granted() refuses the messages not started).
    const delay = (target.retryDelaysMs ?? [250, 1_000])[this.attempt];
    if (delay === undefined || this.hook.closed) {
      target.limiter.release(this.weight);
      this.hook.stats.failed++;
      target.instruments?.messageFailed({ family: reader.family, source: 'mqtt' });
      this.hook.failures.maybe('failed', (suppressed) =>
        target.logger.error(
          { err, readerId: reader.id, topic: this.topic, attempts: this.attempt + 1, ...counted(suppressed) },
          'storing a reader message failed; not acknowledged, the reader will send it again',
        ),
      );
      this.done(asError(err));
      return;
    }
    this.attempt++;
    this.hook.failures.maybe('retrying', (suppressed) =>
      target.logger.warn(
        { err, readerId: reader.id, attempt: this.attempt, ...counted(suppressed) },
        'storing a reader message failed; retrying',
      ),
    );
    setTimeout(() => this.store(), delay);
  }
}
