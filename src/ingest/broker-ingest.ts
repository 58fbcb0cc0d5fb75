import type { ReaderDirectory, ReaderRef } from './directory.js';
import type { IngestInstruments } from './instruments.js';
import { IN_FLIGHT, type IngestLogger, Limiter, LogThrottle, sleep } from './limiter.js';
import type { IngestOutcome } from './outcome.js';
import type { IngestService } from './service.js';

export interface BrokerIngestTarget {
  directory: ReaderDirectory;
  ingest: Pick<IngestService, 'readerMessage'>;
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

/**
 * Ingest inside the embedded broker: the broker calls `handle` for every PUBLISH before
 * it acknowledges it, so a reader's QoS 1 message is acknowledged only once it is
 * stored, and a message the service could not store is never acknowledged (the broker
 * drops the reader's connection and the reader sends it again after reconnecting).
 * A consumer subscribed to the embedded broker could not promise that: the broker
 * acknowledges the reader on receipt and keeps undelivered messages only in memory.
 *
 * The broker starts before the database, so messages wait in `handle` until `attach`
 * supplies the reader directory and the ingest service.
 */
export class BrokerIngest {
  private target: (BrokerIngestTarget & { limiter: Limiter }) | undefined;
  private readonly attachWaiters: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  private closed = false;
  private readonly throttle = new LogThrottle();
  readonly stats = { stored: 0, failed: 0 };

  attach(target: BrokerIngestTarget): void {
    if (this.closed) throw new IngestUnavailableError();
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
   * The broker's publish hook: resolves once stored (or not a reader topic); rejects to
   * refuse. Promise chains, not async functions: this runs for every PUBLISH, and with one
   * read per message the frames of three nested async functions were a cost of their own.
   */
  handle(topic: string, payload: Buffer): Promise<void> {
    const receivedAt = Date.now();
    if (!this.target) {
      if (this.closed) return Promise.reject(new IngestUnavailableError());
      return new Promise<void>((resolve, reject) => this.attachWaiters.push({ resolve, reject })).then(() =>
        this.admit(topic, payload, receivedAt),
      );
    }
    try {
      return this.admit(topic, payload, receivedAt);
    } catch (err) {
      return Promise.reject(err); // as an async function would: the hook expects a rejection
    }
  }

  /** Takes a slot of the in-flight bound (waiting for one when they are taken), then stores. */
  private admit(topic: string, payload: Buffer, receivedAt: number): Promise<void> {
    if (this.closed) return Promise.reject(new IngestUnavailableError());
    const target = this.target!;
    const reader = target.directory.lookup(topic);
    if (!reader) return Promise.resolve(); // not a reader's topic: an ordinary message for whoever subscribed
    const weight = payload.byteLength;
    // Straight on when a slot is free: a link less in the chain every waiting message keeps.
    if (target.limiter.tryAcquire(weight))
      return this.attempt(target, reader, topic, payload, receivedAt, 0, weight);
    return target.limiter
      .acquire(weight)
      .then(() => this.attempt(target, reader, topic, payload, receivedAt, 0, weight));
  }

  /**
   * One attempt to store; a failure is retried after the next delay, until there is none.
   * Holds the in-flight slot of `weight` that admit() took, and releases it once the
   * message is stored or given up.
   */
  private attempt(
    target: BrokerIngestTarget & { limiter: Limiter },
    reader: ReaderRef,
    topic: string,
    payload: Buffer,
    receivedAt: number,
    attempt: number,
    weight: number,
  ): Promise<void> {
    // A stop refuses the messages not started yet; a retry under way is finished.
    if (attempt === 0 && this.closed) {
      target.limiter.release(weight);
      return Promise.reject(new IngestUnavailableError());
    }
    let stored: Promise<IngestOutcome>;
    try {
      stored = target.ingest.readerMessage(reader, payload, 'mqtt', receivedAt);
    } catch (err) {
      stored = Promise.reject(err);
    }
    return stored.then(
      (outcome) => {
        target.limiter.release(weight);
        this.stats.stored++;
        if (outcome.errors.length > 0) {
          this.throttle.maybe(`bad:${reader.id}`, (suppressed) =>
            target.logger.warn(
              { readerId: reader.id, bad: outcome.bad, errors: outcome.errors.slice(0, 5), suppressed },
              'reader message had bad reads (kept in the raw log)',
            ),
          );
        }
      },
      (err: unknown) => {
        const delay = (target.retryDelaysMs ?? [250, 1_000])[attempt];
        if (delay === undefined || this.closed) {
          target.limiter.release(weight);
          this.stats.failed++;
          target.instruments?.messageFailed({ family: reader.family, source: 'mqtt' });
          target.logger.error(
            { err, readerId: reader.id, topic, attempts: attempt + 1 },
            'storing a reader message failed; not acknowledged, the reader will send it again',
          );
          throw err;
        }
        target.logger.warn(
          { err, readerId: reader.id, attempt: attempt + 1 },
          'storing a reader message failed; retrying',
        );
        return sleep(delay).then(() =>
          this.attempt(target, reader, topic, payload, receivedAt, attempt + 1, weight),
        );
      },
    );
  }

  /** Refuses new messages and waits for those being stored. */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.attachWaiters.splice(0)) w.reject(new IngestUnavailableError());
    await this.target?.limiter.idle();
  }
}
