/**
 * Ingest benchmark: reads per second sustained end to end (a reader publishes over MQTT,
 * the read is stored and queryable), and the bytes stored per million reads, for a
 * stationary population (every asset read again and again where it is) and a moving one
 * (every read of an asset is at another location).
 *
 *   npm run bench:ingest [-- --reads 300000 --assets 10000 --readers 4 --batch 100 --json]
 *
 * Runs the whole service in-process (startService) on a fresh database per population: the
 * embedded PostgreSQL in a temporary directory, or TEST_DATABASE_URL's server when set; the
 * embedded MQTT broker, or BENCH_MQTT_URL's broker through the MQTT consumer when set.
 * Readers publish generic-json messages of 100 reads at QoS 1, one MQTT connection per
 * reader; the clock stops when the readers' good_reads add up to every read published.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { MqttClient } from 'mqtt';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../src/db/embedded.js';
import { createDatabase } from '../src/db/pool.js';
import { connectMqtt } from '../src/ingest/mqtt-connection.js';
import { ReaderService } from '../src/ingest/readers-service.js';
import { consumerClientId } from '../src/ingest/transport.js';
import { startService } from '../src/runtime.js';

const { values: args } = parseArgs({
  options: {
    reads: { type: 'string', default: '300000' },
    assets: { type: 'string', default: '10000' },
    readers: { type: 'string', default: '4' },
    batch: { type: 'string', default: '100' },
    json: { type: 'boolean', default: false },
  },
});
const READS = Number(args.reads);
const ASSETS = Number(args.assets);
const READERS = Number(args.readers);
const BATCH = Number(args.batch);
const ANTENNAS = 4;
const LOCATIONS = READERS * ANTENNAS;
for (const [name, v] of Object.entries({ READS, ASSETS, READERS, BATCH })) {
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name.toLowerCase()} must be a positive integer`);
}
if (READS % ASSETS !== 0)
  throw new Error('--reads must be a multiple of --assets (every asset is read as often)');

type Population = 'stationary' | 'moving';

interface Result {
  population: Population;
  reads: number;
  assets: number;
  seconds: number;
  readsPerSecond: number;
  staysBytesPerMillionReads: number;
  rawLogBytesPerMillionReads: number;
  stays: number;
}

const log = (line: string) => {
  if (!args.json) process.stderr.write(`${line}\n`);
};

async function server(): Promise<{ adminUrl: string; urlFor(db: string): string; stop(): Promise<void> }> {
  const external = process.env.TEST_DATABASE_URL;
  if (external) {
    return {
      adminUrl: external,
      urlFor(db) {
        const url = new URL(external);
        url.pathname = `/${db}`;
        return url.toString();
      },
      stop: async () => undefined,
    };
  }
  const dir = await mkdtemp(join(tmpdir(), 'tagtrail-bench-pg-'));
  const embedded: EmbeddedPostgres = await startEmbeddedPostgres(dir);
  return {
    adminUrl: embedded.adminUrl,
    urlFor: (db) => embedded.urlFor(db),
    async stop() {
      await embedded.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function admin(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Bytes of the raw log (every partition) and of the stays table, indexes and TOAST included. */
async function sizes(pool: pg.Pool): Promise<{ raw: number; stays: number }> {
  const { rows } = await pool.query<{ raw: string; stays: string }>(
    `SELECT (SELECT coalesce(sum(pg_total_relation_size(inhrelid)), 0) FROM pg_inherits
              WHERE inhparent = 'raw_messages'::regclass) AS raw,
            pg_total_relation_size('stays') AS stays`,
  );
  return { raw: Number(rows[0]!.raw), stays: Number(rows[0]!.stays) };
}

const epc = (a: number) => `E28011700000${a.toString(16).toUpperCase().padStart(12, '0')}`;

/** Location (0..LOCATIONS-1) of asset `a` at its read number `k`. */
const where = (population: Population, a: number, k: number) =>
  population === 'stationary' ? a % LOCATIONS : (a + k) % LOCATIONS;

async function run(population: Population, dbServer: Awaited<ReturnType<typeof server>>): Promise<Result> {
  const name = `tagtrail_bench_${population}_${randomBytes(4).toString('hex')}`;
  await admin(dbServer.adminUrl, `CREATE DATABASE ${name}`);
  const url = dbServer.urlFor(name);
  const mqttUrl = process.env.BENCH_MQTT_URL;
  const instance = `bench-${randomBytes(4).toString('hex')}`;
  const running = await startService(
    loadConfig({
      DATABASE_URL: url,
      PORT: '0',
      TAGTRAIL_MQTT_PORT: '0',
      LOG_LEVEL: 'warn',
      ...(mqttUrl ? { MQTT_URL: mqttUrl, TAGTRAIL_INSTANCE: instance } : {}),
    }),
  );
  const db = createDatabase(url, { max: 4 });
  const clients: MqttClient[] = [];
  try {
    // Master data: one organization, LOCATIONS locations, ASSETS assets with one RFID tag each.
    const org = await db.pool.query<{ id: number }>(
      `INSERT INTO organizations (name) VALUES ('bench') RETURNING id`,
    );
    const orgId = org.rows[0]!.id;
    const locations = await db.pool.query<{ id: number }>(
      `INSERT INTO locations (org_id, external_key, name, valid_from)
       SELECT $1, 'LOC-' || i, 'Location ' || i, now() - interval '1 day' FROM generate_series(1, $2) i
       ORDER BY i RETURNING id`,
      [orgId, LOCATIONS],
    );
    await db.pool.query(
      `WITH a AS (
         INSERT INTO assets (org_id, external_key, name, valid_from)
         SELECT $1, 'ASSET-' || i, 'Asset ' || i, now() - interval '1 day' FROM generate_series(0, $2 - 1) i
         RETURNING id, (substring(external_key FROM 7))::int AS n)
       INSERT INTO tags (org_id, tag_type, value, asset_id) SELECT $1, 'rfid', v.value, a.id
       FROM a JOIN unnest($3::text[]) WITH ORDINALITY AS v(value, n) ON v.n = a.n + 1`,
      [orgId, ASSETS, Array.from({ length: ASSETS }, (_, a) => epc(a))],
    );
    // A running service has planner statistics for its tables; a fresh bulk load does not yet.
    await db.pool.query('ANALYZE');
    const readers = new ReaderService(db);
    const topics: string[] = [];
    const readerIds: number[] = [];
    const logins: Array<{ username: string; password: string }> = [];
    for (let r = 0; r < READERS; r++) {
      const topic = `bench/${instance}/reader-${r}`;
      const { reader, mqtt } = await readers.create(orgId, {
        family: 'generic-json',
        identity: `reader-${r}`,
        topic,
      });
      for (let antenna = 1; antenna <= ANTENNAS; antenna++) {
        const location = locations.rows[r * ANTENNAS + antenna - 1]!.id;
        await readers.addScanPoint(orgId, reader.id, { antenna, locationId: location });
      }
      topics.push(topic);
      readerIds.push(reader.id);
      logins.push(mqtt);
      await running.ingest.serving(topic);
    }

    // The messages: round k reads every asset once, at its location for that round; a
    // message carries BATCH reads of one reader. Reader clocks: the last few minutes.
    const rounds = READS / ASSETS;
    const base = Date.now() - (rounds + 60) * 1000;
    const messages: Array<{ reader: number; payload: string }> = [];
    const pending: Array<Array<{ tag: string; antenna: number; time: string }>> = Array.from(
      { length: READERS },
      () => [],
    );
    for (let k = 0; k < rounds; k++) {
      for (let a = 0; a < ASSETS; a++) {
        const loc = where(population, a, k);
        const r = Math.floor(loc / ANTENNAS);
        const batch = pending[r]!;
        batch.push({
          tag: epc(a),
          antenna: (loc % ANTENNAS) + 1,
          time: new Date(base + k * 1000 + (a % 1000)).toISOString(),
        });
        if (batch.length === BATCH) {
          messages.push({ reader: r, payload: JSON.stringify({ reads: batch }) });
          pending[r] = [];
        }
      }
    }
    for (const [r, batch] of pending.entries()) {
      if (batch.length > 0) messages.push({ reader: r, payload: JSON.stringify({ reads: batch }) });
    }

    for (let r = 0; r < READERS; r++) {
      clients.push(
        // Logged in as the reader (the embedded broker requires it; an external one may ignore it).
        await connectMqtt(running.mqttUrl, `${logins[r]!.username}-bench`, {
          reconnectPeriod: 500,
          username: logins[r]!.username,
          password: logins[r]!.password,
        }),
      );
    }
    const before = await sizes(db.pool);
    log(`${population}: publishing ${READS} reads of ${ASSETS} assets in ${messages.length} messages`);
    const started = process.hrtime.bigint();
    const published = Promise.all(
      messages.map((m) => clients[m.reader]!.publishAsync(topics[m.reader]!, m.payload, { qos: 1 })),
    );
    // Done when every read is stored: the readers' counters add up.
    let stored = 0;
    let lastReport = Date.now();
    while (stored < READS) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const { rows } = await db.pool.query<{ n: string }>(
        'SELECT coalesce(sum(good_reads), 0) AS n FROM readers WHERE id = ANY($1::bigint[])',
        [readerIds],
      );
      stored = Number(rows[0]!.n);
      if (Date.now() - lastReport > 5000) {
        lastReport = Date.now();
        log(`  ${stored} reads stored`);
      }
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    await published;
    // The stays table's dead row versions are reclaimed by autovacuum in a running service.
    await db.pool.query('VACUUM (ANALYZE) stays');
    const after = await sizes(db.pool);
    const staysCount = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM stays');
    const perMillion = (bytes: number) => Math.round((bytes / READS) * 1e6);
    return {
      population,
      reads: READS,
      assets: ASSETS,
      seconds: Math.round(seconds * 100) / 100,
      readsPerSecond: Math.round(READS / seconds),
      staysBytesPerMillionReads: perMillion(after.stays - before.stays),
      rawLogBytesPerMillionReads: perMillion(after.raw - before.raw),
      stays: Number(staysCount.rows[0]!.n),
    };
  } finally {
    await Promise.all(clients.map((c) => c.endAsync(true)));
    await running.stop();
    await db.close();
    await admin(dbServer.adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    if (mqttUrl) {
      const c = await connectMqtt(mqttUrl, consumerClientId(instance), { clean: true, reconnectPeriod: 0 });
      await c.endAsync();
    }
  }
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

async function main() {
  const dbServer = await server();
  const results: Result[] = [];
  try {
    for (const population of ['stationary', 'moving'] as const) results.push(await run(population, dbServer));
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
      `${READERS} readers, ${BATCH} reads per message\n\n`,
  );
  process.stdout.write(
    'population   reads     assets  seconds  reads/s   stays per 1M reads   raw log per 1M reads\n',
  );
  for (const r of results) {
    process.stdout.write(
      `${r.population.padEnd(12)} ${String(r.reads).padEnd(9)} ${String(r.assets).padEnd(7)} ${String(r.seconds).padEnd(8)} ` +
        `${String(r.readsPerSecond).padEnd(9)} ${mib(r.staysBytesPerMillionReads).padEnd(20)} ${mib(r.rawLogBytesPerMillionReads)}\n`,
    );
  }
  process.stdout.write(
    `\nstays rows at the end: ${results.map((r) => `${r.population} ${r.stays}`).join(', ')}\n`,
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
