/**
 * Webhooks benchmark (docs/events.md): what outbound webhooks cost ingest, and how fast
 * events reach a receiver while ingest runs at full speed.
 *
 *   npm run bench:webhooks [-- --reads 60000 --assets 3000 --readers 4 --batch 100 --rounds 2 --json]
 *
 * The whole service in-process (startService: embedded broker, and the embedded
 * PostgreSQL in a temporary directory unless TEST_DATABASE_URL is set), a moving
 * population (every read of an asset is at another location, so every read is an
 * asset.moved event: the worst case for events). Each round runs ingest twice on fresh
 * databases, in alternating order: without any webhook endpoint, and with one endpoint
 * subscribed to asset.moved and asset.first_seen whose receiver (a separate process on
 * loopback, answering 204) gets every event. Figures: ingest reads/s of each, their ratio,
 * the events/s delivered while ingest ran, and until the last one was delivered.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MqttClient } from 'mqtt';
import { loadConfig } from '../src/config.js';
import { createDatabase } from '../src/db/pool.js';
import { WebhookService } from '../src/events/webhook-service.js';
import { startService } from '../src/runtime.js';
import { SecretBox } from '../src/secrets/secret-box.js';
import { benchArgs, positiveInteger, usageError } from './cli-args.js';
import {
  adminQuery,
  type BenchPostgres,
  benchPostgres,
  connectReaders,
  epc,
  registerReaders,
  seedTaggedSite,
  waitForStoredReads,
} from './harness.js';

const USAGE = `npm run bench:webhooks [-- options]   (docs/events.md)
  --reads N     reads in all, a multiple of --assets (60000)
  --assets N    tagged assets, a moving population (3000)
  --readers N   readers, one MQTT connection each (4)
  --batch N     reads per message (100)
  --rounds N    rounds, each ingest without and with an endpoint (2)
  --json        the results as JSON on standard output
env: TEST_DATABASE_URL (a PostgreSQL server instead of the embedded one)`;

const { values: args } = benchArgs(USAGE, {
  options: {
    reads: { type: 'string', default: '60000' },
    assets: { type: 'string', default: '3000' },
    readers: { type: 'string', default: '4' },
    batch: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '2' },
    json: { type: 'boolean', default: false },
  },
});
const READS = positiveInteger('reads', args.reads, USAGE);
const ASSETS = positiveInteger('assets', args.assets, USAGE);
const READERS = positiveInteger('readers', args.readers, USAGE);
const BATCH = positiveInteger('batch', args.batch, USAGE);
const ROUNDS = positiveInteger('rounds', args.rounds, USAGE);
const ANTENNAS = 4;
const LOCATIONS = READERS * ANTENNAS;
if (READS % ASSETS !== 0) usageError('--reads must be a multiple of --assets', USAGE);

const log = (line: string) => {
  if (!args.json) process.stderr.write(`${line}\n`);
};

interface Run {
  webhooks: boolean;
  readsPerSecond: number;
  events: number;
  /** Delivered (2xx) while ingest ran, per second of ingest. */
  eventsPerSecondDuringIngest: number | null;
  /** All events delivered, per second from the first publish to the last delivery. */
  eventsPerSecondOverall: number | null;
}

/** The receiver: its own process, so its work is not on the service's event loop. */
const RECEIVER = `
const http = require('node:http');
let count = 0;
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { count++; res.statusCode = 204; res.end(); });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (m) => { if (m === 'count') process.send({ count }); else if (m === 'stop') process.exit(0); });
`;

async function startReceiver(dir: string) {
  const file = join(dir, 'receiver.cjs');
  await writeFile(file, RECEIVER);
  const child = fork(file, [], { stdio: 'ignore' });
  const port = await new Promise<number>((resolve) =>
    child.once('message', (m) => resolve((m as { port: number }).port)),
  );
  let exited: number | null | undefined;
  child.once('exit', (code) => {
    exited = code;
  });
  return {
    url: `http://127.0.0.1:${port}/events`,
    // A receiver that died or stopped answering ends the run with an error instead of a hang.
    count: () =>
      new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the receiver process does not answer')), 30_000);
        child.once('message', (m) => {
          clearTimeout(timer);
          resolve((m as { count: number }).count);
        });
        if (exited !== undefined) reject(new Error(`the receiver process exited (${exited})`));
        else child.send('count');
      }),
    stop: () => child.send('stop'),
  };
}

async function run(webhooks: boolean, server: BenchPostgres, dir: string): Promise<Run> {
  const name = `tagtrail_bench_hooks_${randomBytes(4).toString('hex')}`;
  await adminQuery(server.adminUrl, `CREATE DATABASE ${name}`);
  const url = server.urlFor(name);
  // The endpoint's secret is sealed here and opened by the service: one key for both.
  const secretKey = randomBytes(32);
  const running = await startService(
    loadConfig({
      DATABASE_URL: url,
      TAGTRAIL_SECRET_KEYS: secretKey.toString('base64'),
      PORT: '0',
      TAGTRAIL_MQTT_PORT: '0',
      LOG_LEVEL: 'warn',
      TAGTRAIL_WEBHOOK_ALLOW_PRIVATE: 'true',
    }),
  );
  const db = createDatabase(url, { max: 4 });
  const receiver = webhooks ? await startReceiver(dir) : null;
  const clients: MqttClient[] = [];
  try {
    const site = await seedTaggedSite(db, { locations: LOCATIONS, assets: ASSETS });
    if (receiver) {
      await new WebhookService(db, new SecretBox([secretKey]), { allowPrivate: true }).create(site.orgId, {
        url: receiver.url,
        event_types: ['asset.moved', 'asset.first_seen'],
      });
    }
    const readers = await registerReaders(db, running.ingest, site, {
      count: READERS,
      antennas: ANTENNAS,
      topicPrefix: `bench/hooks/${name}`,
    });
    const { topics, readerIds } = readers;
    clients.push(...(await connectReaders(running.mqttUrl, readers)));
    // Round k reads every asset once, each at the next location: every read is a move.
    const rounds = READS / ASSETS;
    const base = Date.now() - (rounds + 60) * 1000;
    const messages: Array<{ reader: number; payload: string }> = [];
    const pending: Array<Array<{ tag: string; antenna: number; time: string }>> = Array.from(
      { length: READERS },
      () => [],
    );
    const flush = (r: number) => {
      messages.push({ reader: r, payload: JSON.stringify({ reads: pending[r] }) });
      pending[r] = [];
    };
    for (let k = 0; k < rounds; k++) {
      for (let a = 0; a < ASSETS; a++) {
        const loc = (a + k) % LOCATIONS;
        const r = Math.floor(loc / ANTENNAS);
        pending[r]!.push({
          tag: epc(a),
          antenna: (loc % ANTENNAS) + 1,
          time: new Date(base + k * 1000 + (a % 1000)).toISOString(),
        });
        if (pending[r]!.length === BATCH) flush(r);
      }
    }
    for (let r = 0; r < READERS; r++) if (pending[r]!.length > 0) flush(r);

    log(`${webhooks ? 'with' : 'without'} webhooks: ${READS} reads in ${messages.length} messages`);
    const started = process.hrtime.bigint();
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9;
    const published = Promise.all(
      messages.map((m) => clients[m.reader]!.publishAsync(topics[m.reader]!, m.payload, { qos: 1 })),
    );
    await waitForStoredReads(db, readerIds, READS);
    const ingestSeconds = elapsed();
    await published;
    const events = Number(
      (await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0]!.n,
    );
    let duringIngest: number | null = null;
    let overall: number | null = null;
    if (receiver) {
      duringIngest = await receiver.count();
      let delivered = duringIngest;
      let lastLog = Date.now();
      while (delivered < events) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        delivered = await receiver.count();
        if (Date.now() - lastLog > 5000) {
          lastLog = Date.now();
          const states = await db.pool.query<{ state: string; n: string; error: string | null }>(
            `SELECT state, count(*) AS n, max(last_error) AS error FROM webhook_deliveries GROUP BY state`,
          );
          const summary = states.rows
            .map((r) => `${r.state} ${r.n}${r.error ? ` (${r.error})` : ''}`)
            .join(', ');
          log(`  ${delivered} of ${events} events delivered; deliveries: ${summary}`);
        }
      }
      overall = events / elapsed();
      duringIngest /= ingestSeconds;
    }
    return {
      webhooks,
      readsPerSecond: Math.round(READS / ingestSeconds),
      events,
      eventsPerSecondDuringIngest: duringIngest === null ? null : Math.round(duringIngest),
      eventsPerSecondOverall: overall === null ? null : Math.round(overall),
    };
  } finally {
    await Promise.all(clients.map((c) => c.endAsync(true)));
    await running.stop();
    receiver?.stop();
    await db.close();
    await adminQuery(server.adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

async function main() {
  const server = await benchPostgres();
  const dir = await mkdtemp(join(tmpdir(), 'tagtrail-bench-hooks-'));
  const runs: Run[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating order, so a drift in the machine's load does not favour one side.
      const order = round % 2 === 0 ? [false, true] : [true, false];
      for (const webhooks of order) runs.push(await run(webhooks, server, dir));
    }
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const without = mean(runs.filter((r) => !r.webhooks).map((r) => r.readsPerSecond));
  const withHooks = mean(runs.filter((r) => r.webhooks).map((r) => r.readsPerSecond));
  const summary = {
    reads: READS,
    assets: ASSETS,
    readers: READERS,
    batch: BATCH,
    runs,
    ingestWithoutWebhooks: Math.round(without),
    ingestWithWebhooks: Math.round(withHooks),
    /** Ingest throughput lost to webhooks: 1 - with / without. */
    cost: Math.round((1 - withHooks / without) * 1000) / 1000,
    loadAverage: loadavg().map((l) => Math.round(l * 10) / 10),
    cpus: cpus().length,
  };
  if (args.json) {
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return;
  }
  process.stdout.write(
    `tagtrail webhooks: moving population (every read a move), ${READS} reads of ${ASSETS} assets, ` +
      `${READERS} readers, ${BATCH} reads per message, ${cpus().length} CPUs\n\n`,
  );
  for (const r of runs) {
    process.stdout.write(
      `${r.webhooks ? 'with webhooks   ' : 'without webhooks'}  ingest ${r.readsPerSecond} reads/s` +
        (r.webhooks
          ? `, ${r.events} events: ${r.eventsPerSecondDuringIngest}/s delivered during ingest, ` +
            `${r.eventsPerSecondOverall}/s until the last was delivered`
          : '') +
        '\n',
    );
  }
  process.stdout.write(
    `\ningest without webhooks ${summary.ingestWithoutWebhooks} reads/s, with ${summary.ingestWithWebhooks} reads/s: ` +
      `cost ${(summary.cost * 100).toFixed(1)}%; load average at the end ${summary.loadAverage.join(' ')}\n`,
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
