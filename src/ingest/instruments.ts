/**
 * What the ingest write path reports about itself, for the metrics endpoint
 * (docs/metrics.md). The ingest code calls these at the points only it knows (a message
 * committed, a transaction committed); the composition root hands in the implementation
 * (src/metrics/), so ingest knows nothing of Prometheus. Calls must be cheap and never
 * throw: they run on the hot path, after the commit.
 */
export interface IngestInstruments {
  /**
   * One message (reader message, handheld submission or import chunk) is durable: its
   * reads by outcome, and how long it took from receipt to the commit that holds it (what
   * a reader waits for its acknowledgement).
   */
  messageStored(message: StoredMessage): void;
  /** A message that could not be stored after every retry (left for redelivery). */
  messageFailed(message: { family: string; source: MessageSource }): void;
  /**
   * One committed transaction of the write path: how many messages and reads it held and
   * how long it took from its start to its commit. Today one message is one transaction;
   * a path that groups messages into one commit reports the group here.
   */
  batchCommitted(batch: CommittedBatch): void;
}

export type MessageSource = 'mqtt' | 'webhook' | 'handheld' | 'import';

export interface StoredMessage {
  /** The reader family (`impinj-r700`, …), or the source for records without a reader (`handheld`, `import`). */
  family: string;
  source: MessageSource;
  /** Reads stored (resolved to an asset and a location). */
  good: number;
  /** Reads refused: malformed, or no scan point for their antenna. */
  bad: number;
  /** Reads of tags that match no asset. */
  unknown: number;
  /** Epoch milliseconds the message was received. */
  receivedAt: number;
  /** Epoch milliseconds its transaction committed. */
  committedAt: number;
  /** A redelivery of a message already stored, recognised and skipped (docs/ingest.md, "Redeliveries"). */
  duplicate?: boolean;
}

export interface CommittedBatch {
  messages: number;
  reads: number;
  /** From the transaction's start to its commit. */
  seconds: number;
}

/** For code run without a metrics endpoint (the CLI, most tests). */
export const NO_INSTRUMENTS: IngestInstruments = {
  messageStored: () => undefined,
  messageFailed: () => undefined,
  batchCommitted: () => undefined,
};
