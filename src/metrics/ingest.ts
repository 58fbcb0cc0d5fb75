import { Counter, Histogram, type Registry } from 'prom-client';
import type {
  CommittedBatch,
  IngestInstruments,
  MessageSource,
  StoredMessage,
} from '../ingest/instruments.js';
import { TalliedCounter, TalliedHistogram } from './tally.js';

/** Seconds: from a millisecond to half a minute, where a reader's acknowledgement would time out. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Messages per commit: one (today's path) up to large group commits. */
const BATCH_MESSAGE_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048];
/** Reads per commit: one read up to a group of many 500-read messages. */
const BATCH_READ_BUCKETS = [1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 25_000, 50_000, 100_000];

/**
 * The ingest series of docs/metrics.md, fed through the IngestInstruments port. The series
 * moved once per message are tallies (./tally.ts: plain numbers, handed over at scrape):
 * with one read per message this is called for every read. The per-transaction and failure
 * series are prom-client's own.
 */
export function ingestInstruments(registry: Registry): IngestInstruments {
  const registers = [registry];
  const reads = new TalliedCounter({
    name: 'tagtrail_ingest_reads_total',
    help: 'Reads in stored messages, by reader family and outcome (ingested, rejected, unknown)',
    labelNames: ['family', 'outcome'] as const,
    registers,
  });
  const messages = new TalliedCounter({
    name: 'tagtrail_ingest_messages_total',
    help: 'Messages stored (committed), by reader family and source',
    labelNames: ['family', 'source'] as const,
    registers,
  });
  const redeliveries = new TalliedCounter({
    name: 'tagtrail_ingest_redeliveries_total',
    help: 'Messages recognised as redeliveries of messages already stored, and skipped (not stored or counted again)',
    labelNames: ['family', 'source'] as const,
    registers,
  });
  const failed = new Counter({
    name: 'tagtrail_ingest_messages_failed_total',
    help: 'Messages that could not be stored after every retry (left unacknowledged for redelivery)',
    labelNames: ['family', 'source'] as const,
    registers,
  });
  const messageLatency = new TalliedHistogram({
    name: 'tagtrail_ingest_message_latency_seconds',
    help: 'From receipt of a message to the commit of the transaction holding it',
    labelNames: ['source'],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const batchDuration = new Histogram({
    name: 'tagtrail_ingest_batch_duration_seconds',
    help: 'One write transaction of the ingest path, from its start (waiting for a connection included) to its commit',
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const batchMessages = new Histogram({
    name: 'tagtrail_ingest_batch_messages',
    help: 'Messages per committed ingest transaction (the commit batch size)',
    buckets: BATCH_MESSAGE_BUCKETS,
    registers,
  });
  const batchReads = new Histogram({
    name: 'tagtrail_ingest_batch_reads',
    help: 'Reads per committed ingest transaction',
    buckets: BATCH_READ_BUCKETS,
    registers,
  });
  return {
    messageStored(m: StoredMessage) {
      if (m.duplicate) {
        redeliveries.add(m.family, m.source);
        return;
      }
      if (m.good > 0) reads.add(m.family, 'ingested', m.good);
      if (m.bad > 0) reads.add(m.family, 'rejected', m.bad);
      if (m.unknown > 0) reads.add(m.family, 'unknown', m.unknown);
      messages.add(m.family, m.source);
      messageLatency.observe(m.source, Math.max(0, m.committedAt - m.receivedAt) / 1000);
    },
    messageFailed(m: { family: string; source: MessageSource }) {
      failed.inc({ family: m.family, source: m.source });
    },
    batchCommitted(b: CommittedBatch) {
      batchDuration.observe(b.seconds);
      batchMessages.observe(b.messages);
      batchReads.observe(b.reads);
    },
  };
}
