/**
 * A steady load for a long time, to see what holds and what drifts: memory, event loop,
 * the database's growth, and whether anything acknowledged goes missing.
 *
 *   npm run bench:soak                                # 10 minutes, 200 API req/s, 2,000 reads/s
 *   npm run bench:soak -- --minutes 60 --every 30     # an hour, a sample every 30 s
 *   npm run bench:soak -- --rate 400 --reads 5000 --batch 50 --no-baseline
 *
 * Runs the compiled service as an operator does (`tagtrail serve`, its own process, the
 * embedded PostgreSQL and broker in a temporary data directory), sets up a site through
 * the CLI and the APIs (bench/soak-site.mjs), then for `--minutes` loads it at once with:
 * the API's mixed load (bench/api.mjs's mix) at a fixed `--rate` from autocannon in a child
 * process; readers publishing `--reads` reads a second in messages of `--batch` at QoS 1
 * (bench/soak-readers.mjs); the webhook deliveries that follows, to a receiver here. The
 * baseline, bench/api-baseline.mjs's bare Fastify + `pg` in a process of its own on the
 * same database, takes the same API load at the same time.
 *
 * Every `--every` seconds it samples both processes' resident memory and JavaScript heap,
 * the service's event loop delay (p99), handles, pool waiters, undispatched events and CPU,
 * and the database's size. At the end it prints the samples; each process's memory drift
 * after the first quarter (least squares, MiB per hour) side by side; the API's answers by
 * status; and the ingest's ledger: messages acknowledged against messages in the raw log,
 * which must be equal. BENCH_PG_STATS=1 adds PostgreSQL's costliest statements of the load.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { benchArgs } from '../dist/bench/cli-args.js';
import { printStatements } from '../dist/bench/server-stats.js';
import {
  afterWarmup,
  cpuSeconds,
  floorSlopePerHour,
  growth,
  ingestDelta,
  metricSums,
  routeMeans,
  rssMiB,
  serverCpuSeconds,
  slopePerHour,
  tableBytes,
  toMiB,
} from '../dist/bench/soak-sampling.js';
import { apiRequests } from './api-cases.mjs';
import { embeddedUrl, runLoad, serviceEnv, startChild, startService } from './served.mjs';
import { startReaders } from './soak-readers.mjs';
import { setUpSite } from './soak-site.mjs';

const USAGE = `npm run bench:soak -- [options]   (docs/soak.md)
  --minutes N       how long to load the service (10)
  --every S         seconds between samples (15)
  --rate R          API requests per second, to the service and to the baseline each (200; 0: none)
  --connections C   autocannon connections per target (20)
  --reads N         reads per second published by the readers (2000)
  --batch N         reads per message (20)
  --readers N       MQTT readers (4), each with --antennas scan points (4)
  --assets N        assets with an RFID tag each, moved once a minute (2000)
  --no-baseline     load the service alone
  BENCH_PG_STATS=1  restart once with pg_stat_statements and print the costliest statements`;

const { values: args } = benchArgs(USAGE, {
  options: {
    minutes: { type: 'string', default: '10' },
    every: { type: 'string', default: '15' },
    rate: { type: 'string', default: '200' },
    connections: { type: 'string', default: '20' },
    reads: { type: 'string', default: '2000' },
    batch: { type: 'string', default: '20' },
    readers: { type: 'string', default: '4' },
    antennas: { type: 'string', default: '4' },
    assets: { type: 'string', default: '2000' },
    'no-baseline': { type: 'boolean', default: false },
  },
});
const SECONDS = Math.round(Number(args.minutes) * 60);
const EVERY = Number(args.every);
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Deliveries arrive here; every one is answered 204 and counted. */
async function webhookReceiver() {
  const received = { count: 0 };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.count++;
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, received, url: `http://127.0.0.1:${server.address().port}/hook` };
}

function apiLoad(url, token, mix) {
  // --rate 0: no API load (readers alone); autocannon would take 0 as no limit.
  if (Number(args.rate) === 0) return Promise.resolve(undefined);
  return runLoad({
    url,
    connections: Number(args.connections),
    duration: SECONDS,
    overallRate: Number(args.rate),
    headers: { authorization: `Bearer ${token}` },
    requests: mix,
  });
}

const dataDir = await mkdtemp(join(tmpdir(), 'tagtrail-soak-'));
const metricsToken = randomBytes(24).toString('hex');
const env = serviceEnv(dataDir, {
  TAGTRAIL_METRICS_TOKEN: metricsToken,
  TAGTRAIL_WEBHOOK_ALLOW_PRIVATE: 'true',
  // Every simulated reader connects from loopback: one address, beyond the default 32.
  TAGTRAIL_MQTT_MAX_CONNECTIONS_PER_ADDRESS: '100000',
  TAGTRAIL_MQTT_MAX_CONNECTIONS: '100000',
});

const hooks = await webhookReceiver();
const serve = () => startService(env);
let service = await serve();
if (process.env.BENCH_PG_STATS) {
  // pg_stat_statements is loaded at the server's start only: set it, then start again.
  const admin = new pg.Client({ connectionString: await embeddedUrl(dataDir) });
  await admin.connect();
  await admin.query("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
  await admin.end();
  service.child.kill('SIGTERM');
  await new Promise((resolve) => service.child.on('exit', resolve));
  service = await serve();
}
const serviceUrl = service.match[1];
const mqttUrl = /MQTT broker \(embedded\) listening on (mqtt:\/\/\S+)/.exec(service.out.stderr)[1];
const databaseUrl = await embeddedUrl(dataDir);
const db = new pg.Pool({ connectionString: databaseUrl, max: 1 });
const cleanUp = [];

try {
  const assets = Number(args.assets);
  process.stderr.write(`setting up: ${assets} assets, ${args.readers} readers\n`);
  const site = await setUpSite({
    url: serviceUrl,
    env,
    name: 'Soak',
    readers: Number(args.readers),
    antennas: Number(args.antennas),
    assets,
    webhookUrl: hooks.url,
  });
  // Readers are served on the notification of their creation; the periodic re-read is the backstop.
  await pause(6000);

  // The baseline's own organization, with the same assets and locations: sharing one, its
  // writes would wait at the same row and key locks as the service's.
  let baseline;
  let baselineSite;
  if (!args['no-baseline']) {
    baselineSite = await setUpSite({
      url: serviceUrl,
      env,
      name: 'Soak baseline',
      readers: Number(args.readers),
      antennas: Number(args.antennas),
      assets,
      devices: false,
    });
    baseline = await startChild(
      process.execPath,
      [new URL('./soak-baseline.mjs', import.meta.url).pathname, databaseUrl, String(baselineSite.orgId)],
      process.env,
      /listening (\d+)/,
    );
    cleanUp.push(() => baseline.child.kill('SIGTERM'));
  }
  const baselineUrl = baseline && `http://127.0.0.1:${baseline.match[1]}`;

  const mixFor = (s) => {
    const live = [Math.min(...s.assetIds), Math.max(...s.assetIds)];
    return apiRequests(assets, s.root).mix.map((r) => (r.ids ? { ...r, ids: live } : r));
  };
  process.stderr.write(`loading for ${SECONDS} s: ${args.rate} API req/s each, ${args.reads} reads/s\n`);
  if (process.env.BENCH_PG_STATS) {
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await db.query("SET pg_stat_statements.track = 'all'").catch(() => undefined);
    await db.query('SELECT pg_stat_statements_reset()');
  }
  const scrape = async () =>
    (await fetch(`${serviceUrl}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text();
  const tablesBefore = await tableBytes(db);
  const metricsBefore = await scrape();
  const readers = await startReaders({
    mqttUrl,
    logins: site.logins,
    antennas: Number(args.antennas),
    assets,
    readsPerSecond: Number(args.reads),
    readsPerMessage: Number(args.batch),
  });
  const loads = Promise.all([
    apiLoad(serviceUrl, site.token, mixFor(site)),
    baselineUrl ? apiLoad(baselineUrl, baselineSite.token, mixFor(baselineSite)) : undefined,
  ]);

  const samples = [];
  const started = Date.now();
  const postmaster = Number(
    (await readFile(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0],
  );
  let lastCpu = await cpuSeconds(service.child.pid);
  let lastPgCpu = await serverCpuSeconds(postmaster);
  let lastAt = started;
  for (let at = EVERY; at <= SECONDS; at += EVERY) {
    await pause(started + at * 1000 - Date.now());
    const metrics = metricSums(await scrape());
    const cpu = await cpuSeconds(service.child.pid);
    const pgCpu = await serverCpuSeconds(postmaster);
    const now = Date.now();
    const sample = {
      at,
      rss: await rssMiB(service.child.pid),
      heap: toMiB(metrics.get('nodejs_heap_size_used_bytes')),
      external: toMiB(metrics.get('nodejs_external_memory_bytes')),
      lagP99: metrics.get('nodejs_eventloop_lag_p99_seconds') * 1000,
      handles: metrics.get('nodejs_active_handles_total'),
      waiting: metrics.get('tagtrail_db_pool_waiting_clients'),
      undispatched: metrics.get('tagtrail_events_undispatched'),
      cpu: ((cpu - lastCpu) / ((now - lastAt) / 1000)) * 100,
      pgCpu: ((pgCpu - lastPgCpu) / ((now - lastAt) / 1000)) * 100,
      dbMiB: toMiB(Number((await db.query("SELECT pg_database_size('tagtrail') AS n")).rows[0].n)),
      published: readers.counts.published,
    };
    if (baselineUrl) {
      sample.baseRss = await rssMiB(baseline.child.pid);
      sample.baseHeap = toMiB((await (await fetch(`${baselineUrl}/memory`)).json()).heapUsed);
    }
    lastCpu = cpu;
    lastPgCpu = pgCpu;
    lastAt = now;
    samples.push(sample);
    process.stderr.write(`${at} s: rss ${sample.rss.toFixed(0)} MiB, heap ${sample.heap.toFixed(0)} MiB\n`);
  }
  const [serviceLoad, baselineLoad] = await loads;
  const tablesGrew = growth(tablesBefore, await tableBytes(db));
  const metricsAfter = await scrape();
  const routes = routeMeans(metricsAfter, 'tagtrail_http_request_duration_seconds', metricsBefore);
  const ingestTotals = ingestDelta(metricSums(metricsBefore), metricSums(metricsAfter));
  await readers.stop();

  // The ledger: every acknowledged message must be in the raw log once.
  const settleBy = Date.now() + 120_000;
  let stored = 0;
  do {
    stored = Number((await db.query('SELECT count(*) AS n FROM raw_log')).rows[0].n);
    if (stored >= readers.counts.acked) break;
    await pause(500);
  } while (Date.now() < settleBy);
  await pause(3000);
  const deliveredBy = hooks.received.count;

  if (process.env.BENCH_PG_STATS) await printStatements(db, 'soak');
  report({
    samples,
    serviceLoad,
    baselineLoad,
    readers: readers.counts,
    stored,
    delivered: deliveredBy,
    tablesGrew,
    routes,
    ingestTotals,
    service,
  });
} finally {
  for (const fn of cleanUp) fn();
  await db.end();
  service.child.kill('SIGTERM');
  await new Promise((resolve) => service.child.on('exit', resolve));
  hooks.server.close();
  await rm(dataDir, { recursive: true, force: true });
}

function report({
  samples,
  serviceLoad,
  baselineLoad,
  readers,
  stored,
  delivered,
  tablesGrew,
  routes,
  ingestTotals,
  service,
}) {
  const f = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '-');
  const cols = [
    's',
    'rss MiB',
    'heap MiB',
    'ext MiB',
    'lag p99 ms',
    'handles',
    'waiting',
    'undispatched',
    'cpu %',
    'pg cpu %',
    'db MiB',
  ];
  if (samples[0]?.baseRss !== undefined) cols.push('base rss', 'base heap');
  console.log(
    `tagtrail soak: ${args.minutes} min, API ${args.rate} req/s (${args.connections} connections), ` +
      `${args.reads} reads/s in messages of ${args.batch}, ${args.readers} readers, ${args.assets} assets; ` +
      `node ${process.version}\n`,
  );
  console.log(cols.map((c) => c.padStart(12)).join(''));
  for (const s of samples) {
    const row = [
      s.at,
      f(s.rss),
      f(s.heap, 1),
      f(s.external, 1),
      f(s.lagP99, 1),
      s.handles,
      s.waiting,
      s.undispatched,
      f(s.cpu),
      f(s.pgCpu),
      f(s.dbMiB),
    ];
    if (s.baseRss !== undefined) row.push(f(s.baseRss), f(s.baseHeap, 1));
    console.log(row.map((c) => String(c).padStart(12)).join(''));
  }
  const steady = afterWarmup(samples);
  const points = (key) => steady.map((s) => [s.at, s[key]]);
  const drift = (key) => `${f(slopePerHour(points(key)), 1)} (floor ${f(floorSlopePerHour(points(key)), 1)})`;
  console.log(
    '\ndrift after the first quarter, MiB per hour: least squares over all samples (the floor: over the least of each four):',
  );
  console.log(`  tagtrail  rss ${drift('rss')}  heap ${drift('heap')}  external ${drift('external')}`);
  if (samples[0]?.baseRss !== undefined)
    console.log(`  baseline  rss ${drift('baseRss')}  heap ${drift('baseHeap')}`);
  console.log(`  database  ${f(slopePerHour(points('dbMiB')), 0)} MiB per hour`);
  const side = (name, l) =>
    l &&
    console.log(
      `${name.padEnd(9)} API ${f(l.rps)} req/s p50 ${l.p50} ms p99 ${l.p99} ms, statuses ${JSON.stringify(l.statuses)}, errors ${l.errors}`,
    );
  console.log('');
  side('tagtrail', serviceLoad);
  side('baseline', baselineLoad);
  console.log(
    `ingest    ${readers.published} messages (${readers.reads} reads) published, ${readers.acked} acknowledged, ` +
      `${readers.failed} refused; ${stored} in the raw log: ${stored === readers.acked ? 'none lost, none twice' : 'MISMATCH'}`,
  );
  const t = ingestTotals;
  console.log(
    `          ${t.transactions} transactions booked ${t.booked} messages (${f(t.booked / t.transactions, 2)} each); ` +
      `mean ${f(t.latencyMs, 1)} ms from receipt to commit, ${f(t.transactionMs, 1)} ms per transaction`,
  );
  console.log(`webhooks  ${delivered} deliveries received`);
  console.log('\ntagtrail: mean time to answer by route during the load, as the server measured it:');
  for (const [name, count, ms] of routes.slice(0, 10))
    console.log(`  ${name.padEnd(48)} ${String(count).padStart(8)} requests ${f(ms, 1).padStart(8)} ms`);
  const hours = SECONDS / 3600;
  console.log('\ndatabase growth during the load, by table (with its indexes; MiB per hour of this load):');
  for (const [name, bytes] of tablesGrew)
    console.log(`  ${name.padEnd(28)} ${f(toMiB(bytes) / hours).padStart(8)}`);
  const logLines = service.out.stdout.split('\n').filter((l) => l.startsWith('{'));
  const errors = logLines.filter((l) => JSON.parse(l).level >= 50);
  console.log(`log       ${logLines.length} lines at warn or above, ${errors.length} errors`);
  for (const line of errors.slice(0, 5)) console.log(`  ${line.slice(0, 300)}`);
}
