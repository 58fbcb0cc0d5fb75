/** What an MqttConsumer is given, and what it counts. */
import type { IClientOptions } from 'mqtt';
import type { ReaderDirectory } from './directory.js';
import type { IngestInstruments } from './instruments.js';
import type { IngestLogger } from './limiter.js';
import type { IngestService } from './service.js';

export interface MqttConsumerOptions {
  url: string;
  /**
   * Fixed per instance: the broker keeps the session (subscriptions and QoS 1 messages
   * not yet acknowledged) under this id while the service is down.
   */
  clientId: string;
  /** Subscribe as `$share/<group>/<topic>` so the instances sharing a group split the messages. */
  sharedGroup?: string;
  directory: ReaderDirectory;
  ingest: Pick<IngestService, 'readerMessage'>;
  logger: IngestLogger;
  /**
   * Messages taken in and not yet stored, at most (IngestService commits them in groups).
   * Default IN_FLIGHT.messages; beyond it the consumer stops reading from the socket.
   */
  concurrency?: number;
  /** Their payload bytes, at most. Default IN_FLIGHT.bytes. */
  maxInFlightBytes?: number;
  /** Pauses between attempts to store a message before it is left to the broker's redelivery. */
  retryDelaysMs?: number[];
  /** Extra client options (tests shorten reconnectPeriod). */
  clientOptions?: IClientOptions;
  /**
   * Resolves once the database answers again (or `signal` aborts). After a message failed
   * for a database outage, the consumer waits for it before asking for redelivery, so it
   * resumes within moments of the database's return instead of after a grown backoff.
   */
  databaseAvailable?: (signal: AbortSignal) => Promise<void>;
  /** Where messages that could not be stored are counted (docs/metrics.md). */
  instruments?: Pick<IngestInstruments, 'messageFailed'>;
}

export interface ConsumerStats {
  /** Messages stored and acknowledged. */
  stored: number;
  /** Messages that could not be stored after every retry; left unacknowledged. */
  failed: number;
  /** Messages on a topic no live reader has (acknowledged and dropped). */
  unrouted: number;
  /**
   * Subscriptions of deleted readers that the persistent session still held, dropped: the
   * broker acknowledged the unsubscribe, so nothing more arrives on them.
   */
  leftoversDropped: number;
  /**
   * Retained messages the broker replayed on subscribing (acknowledged and dropped): an old
   * publish handed over again, not a read a reader just made.
   */
  retainedDropped: number;
}
