/** What one population's run of bench/ingest.ts measured, and the table it is printed as. */
import type { ProbeFigures } from './api-probe.js';
import type { GroupFigures } from './ingest-groups.js';
import type { AckLatency } from './paced-publish.js';

export type Population = 'stationary' | 'moving';

export interface Result {
  population: Population;
  reads: number;
  assets: number;
  seconds: number;
  readsPerSecond: number;
  /** With --rate: the reads a second published (messages a second times reads per message). */
  offeredReadsPerSecond: number | null;
  /**
   * With --rate: each message's wait from its due time to its acknowledgement, that is to
   * its commit (bench/paced-publish.ts). A service that keeps up holds it to a few group
   * commits; one that does not lets it grow with the run.
   */
  ackLatencyMs: AckLatency | null;
  /** How the service grouped the messages into transactions over the measured window (bench/ingest-groups.ts). */
  groups: GroupFigures;
  /** With --probe: the service's /healthz answer times over the measured window (bench/api-probe.ts). */
  apiProbe: ProbeFigures | null;
  /**
   * The same rows by COPY, and by one transaction per message (bench/ingest-ceiling.ts);
   * null with --no-ceilings.
   */
  copyReadsPerSecond: number | null;
  transactionReadsPerSecond: number | null;
  /** readsPerSecond / copyReadsPerSecond. */
  shareOfCopy: number | null;
  messages: number;
  /**
   * The same messages through the embedded broker alone, nothing stored
   * (bench/ingest-broker-ceiling.ts): reads/s, and CPU per message of the broker's process
   * and of the publishers. Null with an external broker, and with --no-ceilings.
   */
  brokerReadsPerSecond: number | null;
  brokerCpuMicrosPerMessage: number | null;
  brokerPublishersCpuMicrosPerMessage: number | null;
  /** The service's resident memory: the highest seen while the messages were being stored. */
  peakRssBytes: number;
  /** Its rise over the resident memory when publishing began (the publishers are apart). */
  rssRiseBytes: number;
  /**
   * CPU time of the service's process and of the publishers' together per read stored, in
   * microseconds (PostgreSQL runs in its own processes): comparable with the runs before
   * the publishers had a process of their own, when this was one process's CPU.
   */
  cpuMicrosPerRead: number;
  /**
   * The service's process alone (its broker, ingest, the pool): what a change to the
   * service's own work moves, less disturbed by other load on the machine than reads per second.
   */
  serviceCpuMicrosPerRead: number;
  /**
   * The collector's pauses of the service's main thread per read (bench/gc-pauses.ts), part
   * of the service's CPU: what allocation costs, steadier from run to run than reads/s.
   */
  gcPauseMicrosPerRead: number;
  /** The same for the embedded PostgreSQL (every process of the server); null on an external one. */
  pgCpuMicrosPerRead: number | null;
  /** Events not yet dispatched (webhooks, live views) when the last read was stored. */
  eventsBehind: number;
  /** Seconds from the first publish until the last event was dispatched. */
  dispatchedSeconds: number;
  /** CPU per read of the service and PostgreSQL together until the last event was dispatched. */
  dispatchedCpuMicrosPerRead: number | null;
  /**
   * With `node --expose-gc`: the highest live memory (V8 heap and buffers, each sample
   * after a full collection) above the live memory when publishing began; null without.
   * RSS alone does not tell a growing live set from garbage the collector has not reclaimed.
   */
  liveRiseBytes: number | null;
  staysBytesPerMillionReads: number;
  rawLogBytesPerMillionReads: number;
  /** Once its rows are merged (src/ingest/raw-compaction.ts); null after a warm-up. */
  rawLogMergedBytesPerMillionReads: number | null;
  /** Stays rows the measured run wrote (the warm-up's not counted). */
  stays: number;
  /** Reads stored before the measured window, of other assets (--warmup); 0: none. */
  warmupReads: number;
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** One row per population, the columns padded to a plain-text table. */
export function printResults(results: Result[]): void {
  const table = [
    [
      'population',
      'reads',
      'reads/s',
      'COPY reads/s',
      'tx/message reads/s',
      'share of COPY',
      'peak RSS',
      'RSS rise',
      'node CPU µs/read',
      'service CPU µs/read',
      'GC pause µs/read',
      'pg CPU µs/read',
      'events behind',
      'service + pg µs/read until dispatched',
      'live rise',
      'stays per 1M reads',
      'raw log per 1M reads',
      'merged',
    ],
    ...results.map((r) => [
      r.population,
      String(r.reads),
      String(r.readsPerSecond),
      r.copyReadsPerSecond === null ? '-' : String(r.copyReadsPerSecond),
      r.transactionReadsPerSecond === null ? '-' : String(r.transactionReadsPerSecond),
      r.shareOfCopy === null ? '-' : `${(r.shareOfCopy * 100).toFixed(1)}%`,
      mib(r.peakRssBytes),
      mib(r.rssRiseBytes),
      String(r.cpuMicrosPerRead),
      String(r.serviceCpuMicrosPerRead),
      String(r.gcPauseMicrosPerRead),
      r.pgCpuMicrosPerRead === null ? '-' : String(r.pgCpuMicrosPerRead),
      String(r.eventsBehind),
      r.dispatchedCpuMicrosPerRead === null
        ? '-'
        : `${r.dispatchedCpuMicrosPerRead} (${r.dispatchedSeconds} s)`,
      r.liveRiseBytes === null ? '-' : mib(r.liveRiseBytes),
      mib(r.staysBytesPerMillionReads),
      mib(r.rawLogBytesPerMillionReads),
      r.rawLogMergedBytesPerMillionReads === null ? '-' : mib(r.rawLogMergedBytesPerMillionReads),
    ]),
  ];
  const brokers = results.filter((r) => r.brokerReadsPerSecond !== null);
  const brokerLines = brokers.map(
    (r) =>
      `broker alone, ${r.population}: ${r.brokerReadsPerSecond} reads/s (${r.messages} messages), ` +
      `CPU µs per message: broker ${r.brokerCpuMicrosPerMessage}, publishers ${r.brokerPublishersCpuMicrosPerMessage}; ` +
      `the service reached ${((r.readsPerSecond / r.brokerReadsPerSecond!) * 100).toFixed(1)}% of it\n`,
  );
  const paced = results.flatMap((r) =>
    r.ackLatencyMs === null
      ? []
      : [
          `steady rate, ${r.population}: ${r.offeredReadsPerSecond} reads/s offered, ${r.readsPerSecond} stored; ` +
            `acknowledged after (ms from due) p50 ${r.ackLatencyMs.p50}, p99 ${r.ackLatencyMs.p99}, max ${r.ackLatencyMs.max}; ` +
            `p50 of the first tenth ${r.ackLatencyMs.firstTenthP50}, of the last ${r.ackLatencyMs.lastTenthP50}\n`,
        ],
  );
  const groupLines = results.map(
    (r) =>
      `groups, ${r.population}: ${r.groups.transactions} transactions, ${r.groups.readsPerTransaction} reads placed ` +
      `and ${r.groups.messagesPerTransaction} messages booked per transaction, ${r.groups.transactionMs} ms each; ` +
      `a message waited ${r.groups.messageWaitMs} ms on average from its receipt to its commit\n`,
  );
  const probes = results.flatMap((r) =>
    r.apiProbe === null
      ? []
      : [
          `api, ${r.population}: /healthz answered ${r.apiProbe.answered} times over the measured window ` +
            `(${r.apiProbe.failed} unanswered), in ms p50 ${r.apiProbe.p50}, p90 ${r.apiProbe.p90}, ` +
            `p99 ${r.apiProbe.p99}, max ${r.apiProbe.max}\n`,
        ],
  );
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  for (const row of table) process.stdout.write(`${row.map((c, i) => c.padEnd(widths[i]!)).join('  ')}\n`);
  if (brokerLines.length > 0) process.stdout.write(`\n${brokerLines.join('')}`);
  process.stdout.write(`\n${groupLines.join('')}`);
  if (paced.length > 0) process.stdout.write(`\n${paced.join('')}`);
  if (probes.length > 0) process.stdout.write(`\n${probes.join('')}`);
}
