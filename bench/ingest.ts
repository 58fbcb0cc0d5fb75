/**
 * Ingest benchmark: reads per second sustained end to end (a reader publishes over MQTT,
 * the read is stored and queryable), and the bytes stored per million reads, for a
 * stationary population (every asset read again and again where it is) and a moving one
 * (every read of an asset is at another location).
 *
 *   npm run bench:ingest [-- --reads 300000 --assets 10000 --readers 4 --batch 100 --window 50
 *                        --population stationary --webhook --history 300 --json]
 *   npm run bench:ingest -- --reads 600000 --rate 400   (a steady 400 messages a second)
 *   node --expose-gc dist/bench/ingest.js …   (after a build: adds the live-memory rise)
 *
 * Runs the whole service in-process (startService) on a fresh database per population: the
 * embedded PostgreSQL in a temporary directory, or TEST_DATABASE_URL's server when set; the
 * embedded MQTT broker, or BENCH_MQTT_URL's broker through the MQTT consumer when set.
 * Readers publish generic-json messages of 100 reads at QoS 1, one MQTT connection per
 * reader, from a child process (bench/ingest-publishers.ts), so this process's CPU is the
 * service's; the clock stops when the readers' good_reads add up to every read published.
 */
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';

import { loadConfig } from '../src/config.js';
import { createDatabase } from '../src/db/pool.js';
import { connectMqtt } from '../src/ingest/mqtt-connection.js';
import { consumerClientId } from '../src/ingest/transport.js';
import { startService } from '../src/runtime.js';
import { startApiProbe } from './api-probe.js';
import { benchArgs, positiveInteger, usageError } from './cli-args.js';
import { observeGcPauses } from './gc-pauses.js';
import {
  adminQuery,
  type BenchPostgres,
  benchPostgres,
  queuedEvents,
  registerReaders,
  seedHistory,
  seedTaggedSite,
  subscribeToMoves,
  waitForDispatch,
  waitForStoredReads,
} from './harness.js';
import { type HeapSampling, startHeapSampling } from './heap-sampling.js';
import { type BrokerCeiling, brokerCeiling } from './ingest-broker-ceiling.js';
import { copyCeiling, transactionCeiling } from './ingest-ceiling.js';
import { groupFigures, scrapeIngestTotals } from './ingest-groups.js';
import { benchMessages } from './ingest-messages.js';
import { type BenchMessage, type Publishers, startPublishers } from './ingest-publishers.js';
import { type Population, printResults, type Result } from './ingest-results.js';
import { mergedRawBytes, sizes, staysCount, warmUp } from './ingest-stored.js';
import { startMemorySampling } from './memory-sampling.js';
import {
  postgresCpuByProcess,
  postgresCpuMs,
  printServerDelta,
  printStatements,
  serverCounters,
} from './server-stats.js';

const USAGE = `usage: npm run bench:ingest [-- options]   (or node dist/bench/ingest.js after a build)
  --reads N        reads in all, a multiple of --assets (300000)
  --assets N       tagged assets (10000)
  --readers N      readers, one MQTT connection each (4)
  --batch N        reads per message (100)
  --window N       unacknowledged messages per reader at most (unset: the whole backlog)
  --rate N         messages per second in all, evenly (unset: as fast as --window lets;
                   not with --window); prints each message's wait from its due time to
                   its acknowledgement
  --population P   stationary or moving alone (both by default)
  --webhook        an endpoint wants the moves: events are stored and dispatched
  --history N      stays per asset stored before the run (0)
  --warmup N       reads stored first, outside the measured window, of as many other
                   assets as --assets (0): the service's code compiled and its caches
                   warm, as in a service that has been running; a multiple of --assets
  --probe          asks the service's /healthz every 10 ms over the measured window, from
                   a process of its own, and prints its answer times: the API's wait for
                   the event loop it shares with ingest
  --no-ceilings    skip the ceilings (COPY, a transaction per message, the broker alone):
                   for alternating two builds, where only the service's figures count
  --json           the results as JSON on standard output
env: TEST_DATABASE_URL (a PostgreSQL server instead of the embedded one), BENCH_MQTT_URL
(an external broker), BENCH_PG_STATS=1 (the statements' times), BENCH_HEAP_PROFILE=<dir>
(allocations sampled over the measured window, read with bench/heap-summary.mjs)`;

const options = {
  reads: { type: 'string', default: '300000' },
  assets: { type: 'string', default: '10000' },
  readers: { type: 'string', default: '4' },
  batch: { type: 'string', default: '100' },
  // Messages each reader has published and not yet had acknowledged, at most; unset: its
  // whole backlog at once. With a window, what the publishers hold stays small, so the
  // process's memory is the service's (a real reader keeps its backlog on its own disk).
  window: { type: 'string' },
  // A steady stream of N messages a second, as a site's readers send, instead of a backlog:
  // whether the service keeps up, and how long a message then waits to be acknowledged.
  rate: { type: 'string' },
  // One population alone (stationary or moving); both by default.
  population: { type: 'string' },
  // An endpoint wants the moves: stored and dispatched as events (none without one).
  webhook: { type: 'boolean', default: false },
  // Stays per asset already stored before the run (a site tracked for a while): 0, none.
  history: { type: 'string', default: '0' },
  // Reads stored before the measured window, of as many other assets: a short run of small
  // messages otherwise measures the JIT compiling the service's code as much as the service.
  warmup: { type: 'string', default: '0' },
  // The ceilings take half a run and measure nothing of the service: left out when two
  // builds are alternated and only the service's own figures are compared.
  'no-ceilings': { type: 'boolean', default: false },
  // The API's answer time while ingest works (bench/api-probe.ts).
  probe: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
} as const;
const args = benchArgs(USAGE, { options }).values;
const READS = positiveInteger('reads', args.reads, USAGE);
const ASSETS = positiveInteger('assets', args.assets, USAGE);
const READERS = positiveInteger('readers', args.readers, USAGE);
const BATCH = positiveInteger('batch', args.batch, USAGE);
const HISTORY = args.history === '0' ? 0 : positiveInteger('history', args.history, USAGE);
const WARMUP = args.warmup === '0' ? 0 : positiveInteger('warmup', args.warmup, USAGE);
const WINDOW =
  args.window === undefined ? Number.POSITIVE_INFINITY : positiveInteger('window', args.window, USAGE);
const RATE = args.rate === undefined ? null : positiveInteger('rate', args.rate, USAGE);
if (RATE !== null && args.window !== undefined)
  usageError('--rate and --window do not go together: a steady stream is paced by its rate', USAGE);
const ANTENNAS = 4;
const METRICS_TOKEN = randomBytes(24).toString('hex');
const LOCATIONS = READERS * ANTENNAS;
const POPULATIONS = (['stationary', 'moving'] as const).filter(
  (p) => args.population === undefined || args.population === p,
);
if (POPULATIONS.length === 0) usageError('--population must be stationary or moving', USAGE);
if (READS % ASSETS !== 0)
  usageError('--reads must be a multiple of --assets (every asset is read as often)', USAGE);
if (WARMUP % ASSETS !== 0)
  usageError('--warmup must be a multiple of --assets (its assets are read as often)', USAGE);

const log = (line: string) => {
  if (!args.json) process.stderr.write(`${line}\n`);
};

async function run(population: Population, dbServer: BenchPostgres): Promise<Result> {
  const name = `tagtrail_bench_${population}_${randomBytes(4).toString('hex')}`;
  await adminQuery(dbServer.adminUrl, `CREATE DATABASE ${name}`);
  const url = dbServer.urlFor(name);
  const mqttUrl = process.env.BENCH_MQTT_URL;
  const instance = `bench-${randomBytes(4).toString('hex')}`;
  const running = await startService(
    loadConfig({
      DATABASE_URL: url,
      PORT: '0',
      TAGTRAIL_MQTT_PORT: '0',
      // Every publisher connects from loopback: one address, beyond the default 32 (--readers 50).
      TAGTRAIL_MQTT_MAX_CONNECTIONS_PER_ADDRESS: '100000',
      TAGTRAIL_MQTT_MAX_CONNECTIONS: '100000',
      LOG_LEVEL: 'warn',
      // Read at both ends of the measured window: how the messages were grouped.
      TAGTRAIL_METRICS_TOKEN: METRICS_TOKEN,
      ...(mqttUrl ? { MQTT_URL: mqttUrl, TAGTRAIL_INSTANCE: instance } : {}),
    }),
  );
  // Seeding thousands of assets on a loaded machine may take longer than a request may.
  const db = createDatabase(url, { max: 4, statementTimeoutMs: 600_000, queryTimeoutMs: 600_000 });
  let stopped = false;
  let publishers: Publishers | undefined;
  try {
    // Master data: one organization, LOCATIONS locations, ASSETS assets with one RFID tag each
    // (and as many more for a warm-up).
    const site = await seedTaggedSite(db, { locations: LOCATIONS, assets: WARMUP > 0 ? 2 * ASSETS : ASSETS });
    const { orgId, locations } = site;
    if (args.webhook) await subscribeToMoves(db, orgId);
    const readers = await registerReaders(db, running.ingest, site, {
      count: READERS,
      antennas: ANTENNAS,
      topicPrefix: `bench/${instance}`,
    });
    const { readerIds } = readers;

    // Reader clocks: the last few minutes.
    const rounds = READS / ASSETS;
    const base = Date.now() - (rounds + 60) * 1000;
    if (HISTORY > 0) {
      log(`${population}: storing ${HISTORY} stays per asset before the run`);
      await seedHistory(db, site, HISTORY, base - 60_000);
    }
    const assetRows = await db.pool.query<{ id: number; external_key: string }>(
      'SELECT id, external_key FROM assets WHERE org_id = $1',
      [orgId],
    );
    const plan = {
      population,
      reads: READS,
      assets: ASSETS,
      batch: BATCH,
      antennas: ANTENNAS,
      base,
      assetIds: new Map(assetRows.rows.map((r) => [Number(r.external_key.slice(6)), r.id])),
      locationIds: locations,
      readerIds,
    };
    // Built again for the ceilings after the window: held through it, the run's messages
    // (and the ceiling's rows) were tens of MiB of the measured process's heap, marked by
    // each of its full collections as if they were the service's.
    let messages: BenchMessage[] | null = benchMessages(plan).messages;
    const messageCount = messages.length;
    if (WARMUP > 0) {
      log(`${population}: warming up with ${WARMUP} reads of ${ASSETS} other assets`);
      const warm = benchMessages({ ...plan, reads: WARMUP, firstAsset: ASSETS }).messages;
      await warmUp({ mqttUrl: running.mqttUrl, readers, messages: warm, window: WINDOW, db, reads: WARMUP });
    }
    const staysBefore = await staysCount(db.pool);

    publishers = await startPublishers({
      mqttUrl: running.mqttUrl,
      readers,
      messages,
      window: WINDOW,
      rate: RATE,
    });
    messages = null; // the publishers' process has them
    const before = await sizes(db.pool);
    const pgStats = Boolean(process.env.BENCH_PG_STATS);
    const heapProfileDir = process.env.BENCH_HEAP_PROFILE;
    if (pgStats) {
      await db.pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      await db.pool.query('SELECT pg_stat_statements_reset()');
    }
    const pgCpu = postgresCpuMs(dbServer.dataDir);
    const pgByProcess = pgStats ? postgresCpuByProcess(dbServer.dataDir) : null;
    const pgByProcessAtStart = pgByProcess?.();
    const countersAtStart = pgStats ? await serverCounters(db.pool) : null;
    // Before the memory, heap and collector sampling start: the scrape is not the service's work.
    const totalsAtStart = await scrapeIngestTotals(running.url, METRICS_TOKEN);
    log(`${population}: publishing ${READS} reads of ${ASSETS} assets in ${messageCount} messages`);
    // Started before the clock and the samplers (its process is forked and has its first
    // answer before the first publish), stopped after the window's figures are read.
    const probe = args.probe ? await startApiProbe(running.url) : null;
    const memory = startMemorySampling();
    const heapSampling: HeapSampling | null = heapProfileDir ? await startHeapSampling(heapProfileDir) : null;
    const gcPauses = observeGcPauses();
    const started = process.hrtime.bigint();
    const cpuAtStart = process.cpuUsage();
    const pgCpuAtStart = pgCpu?.() ?? 0;
    const published = publishers.publish();
    // Done when every read is stored: the readers' counters add up (the warm-up's included).
    await waitForStoredReads(db, readerIds, WARMUP + READS, (stored) =>
      log(`  ${stored - WARMUP} reads stored`),
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const cpu = process.cpuUsage(cpuAtStart);
    const gc = gcPauses.stop();
    const pgCpuMs = pgCpu ? pgCpu() - pgCpuAtStart : null;
    const apiProbe = probe ? await probe.stop() : null;
    // For `node --cpu-prof`: the measured window in the profile's clock (µs), to cut it out.
    log(`${population}: measured from ${started / 1000n} to ${process.hrtime.bigint() / 1000n} µs (hrtime)`);
    if (heapSampling) log(`${population}: allocations sampled in ${await heapSampling.stop(population)}`);
    // The events of the run are dispatched beside ingest; what is left to dispatch when the
    // reads are stored, then the CPU until it is done, so that the dispatch is counted.
    const eventsBehind = await queuedEvents(db);
    await waitForDispatch(db);
    const dispatchedSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    const cpuDispatched = process.cpuUsage(cpuAtStart);
    const pgCpuDispatchedMs = pgCpu ? pgCpu() - pgCpuAtStart : null;
    // Once every CPU figure is read (a scrape queries the event backlog); every read was stored
    // before, so no ingest transaction has come since.
    const groups = groupFigures(totalsAtStart, await scrapeIngestTotals(running.url, METRICS_TOKEN));
    if (pgStats) {
      await printStatements(db.pool, population);
      printServerDelta(
        population,
        READS,
        countersAtStart!,
        await serverCounters(db.pool),
        pgByProcessAtStart,
        pgByProcess?.(),
      );
    }
    const { rssAtStart, peakRss, liveRise } = memory.stop();
    const { cpuMicros: publishersCpuMicros, latency: ackLatency } = await published;
    // The stays table's dead row versions are reclaimed by autovacuum in a running service.
    await db.pool.query('VACUUM (ANALYZE) stays');
    const after = await sizes(db.pool);
    const stays = (await staysCount(db.pool)) - staysBefore;
    // After a warm-up its rows would be merged and rewritten too: only without one.
    const merged = WARMUP === 0 ? await mergedRawBytes(db, (line) => log(`${population}: ${line}`)) : null;
    const perMillion = (bytes: number) => Math.round((bytes / READS) * 1e6);
    // The ceiling, now that the service's figures are taken: the same rows straight into PostgreSQL.
    await running.stop();
    stopped = true;
    const day = 24 * 3600_000;
    let copySeconds: number | null = null;
    let txSeconds: number | null = null;
    const again = args['no-ceilings'] ? null : benchMessages(plan);
    if (again) {
      const ceilingMessages = again.ceiling;
      log(`${population}: ceiling (COPY, then one transaction per message)`);
      copySeconds = await copyCeiling({ url, orgId, messages: ceilingMessages, shiftMs: day });
      txSeconds = await transactionCeiling({ url, orgId, messages: ceilingMessages, shiftMs: 2 * day });
    }
    await publishers.end();
    publishers = undefined;
    // The embedded broker's own ceiling (an external broker runs apart from this process).
    let broker: BrokerCeiling | null = null;
    if (!mqttUrl && again) {
      log(`${population}: ceiling of the embedded broker alone (the same messages, nothing stored)`);
      broker = await brokerCeiling({ readers, messages: again.messages, window: WINDOW });
    }
    const perMessage = (micros: number) => Math.round((micros / messageCount) * 10) / 10;
    const readsPerSecond = Math.round(READS / seconds);
    const copyReadsPerSecond = copySeconds === null ? null : Math.round(READS / copySeconds);
    return {
      population,
      reads: READS,
      assets: ASSETS,
      seconds: Math.round(seconds * 100) / 100,
      readsPerSecond,
      offeredReadsPerSecond: RATE === null ? null : RATE * BATCH,
      ackLatencyMs: ackLatency,
      groups,
      apiProbe,
      copyReadsPerSecond,
      transactionReadsPerSecond: txSeconds === null ? null : Math.round(READS / txSeconds),
      shareOfCopy:
        copyReadsPerSecond === null ? null : Math.round((readsPerSecond / copyReadsPerSecond) * 1000) / 1000,
      messages: messageCount,
      brokerReadsPerSecond: broker && Math.round(READS / broker.seconds),
      brokerCpuMicrosPerMessage: broker && perMessage(broker.brokerCpuMicros),
      brokerPublishersCpuMicrosPerMessage: broker && perMessage(broker.publishersCpuMicros),
      peakRssBytes: peakRss,
      rssRiseBytes: peakRss - rssAtStart,
      liveRiseBytes: liveRise,
      cpuMicrosPerRead: Math.round(((cpu.user + cpu.system + publishersCpuMicros) / READS) * 10) / 10,
      serviceCpuMicrosPerRead: Math.round(((cpu.user + cpu.system) / READS) * 10) / 10,
      gcPauseMicrosPerRead: Math.round(((gc.ms * 1000) / READS) * 10) / 10,
      pgCpuMicrosPerRead: pgCpuMs === null ? null : Math.round(((pgCpuMs * 1000) / READS) * 10) / 10,
      eventsBehind,
      dispatchedSeconds: Math.round(dispatchedSeconds * 100) / 100,
      dispatchedCpuMicrosPerRead:
        pgCpuDispatchedMs === null
          ? null
          : Math.round(
              ((cpuDispatched.user + cpuDispatched.system + pgCpuDispatchedMs * 1000) / READS) * 10,
            ) / 10,
      staysBytesPerMillionReads: perMillion(after.stays - before.stays),
      rawLogBytesPerMillionReads: perMillion(after.raw - before.raw),
      rawLogMergedBytesPerMillionReads: merged === null ? null : perMillion(merged - before.raw),
      stays,
      warmupReads: WARMUP,
    };
  } finally {
    await publishers?.end();
    if (!stopped) await running.stop();
    await db.close();
    await adminQuery(dbServer.adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    if (mqttUrl) {
      const c = await connectMqtt(mqttUrl, consumerClientId(instance), { clean: true, reconnectPeriod: 0 });
      await c.endAsync();
    }
  }
}

async function main() {
  const dbServer = await benchPostgres();
  const results: Result[] = [];
  try {
    for (const population of POPULATIONS) results.push(await run(population, dbServer));
  } finally {
    await dbServer.stop();
  }
  if (args.json) {
    process.stdout.write(`${JSON.stringify(results)}\n`);
    return;
  }
  const transport = process.env.BENCH_MQTT_URL
    ? `MQTT consumer on ${process.env.BENCH_MQTT_URL}`
    : 'embedded MQTT broker';
  const database = process.env.TEST_DATABASE_URL ? 'PostgreSQL at TEST_DATABASE_URL' : 'embedded PostgreSQL';
  process.stdout.write(
    `tagtrail ingest, publish to queryable: ${transport}, ${database}, ${cpus().length} CPUs, ` +
      `${READERS} readers, ${BATCH} reads per message, ` +
      `${RATE !== null ? `${RATE} messages a second in all` : WINDOW === Number.POSITIVE_INFINITY ? 'the whole backlog published at once' : `at most ${WINDOW} unacknowledged messages per reader`}, ` +
      `${args.webhook ? 'moves stored as events for a webhook endpoint' : 'no webhook endpoint (moves not stored as events)'}` +
      `${HISTORY > 0 ? `, ${HISTORY} stays per asset stored before the run` : ''}` +
      `${WARMUP > 0 ? `, after a warm-up of ${WARMUP} reads of ${ASSETS} other assets` : ''}\n\n`,
  );
  printResults(results);
  process.stdout.write(
    `\nstays rows written by the measured run: ${results.map((r) => `${r.population} ${r.stays}`).join(', ')}; ` +
      `load average at the end: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}\n`,
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(
      `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
