/**
 * What the TypeScript benchmarks (ingest, webhooks, import) share to set a run up: the
 * PostgreSQL server their fresh databases live on, a site of tagged assets and locations,
 * fixed readers mapped onto it, and the wait until the service has stored every read.
 * Kept apart so the benchmarks differ only in what they measure.
 */
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MqttClient } from 'mqtt';
import pg from 'pg';
import { cliCaller } from '../src/caller.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import type { Database } from '../src/db/pool.js';
import { connectMqtt } from '../src/ingest/mqtt-connection.js';
import { ReaderService } from '../src/ingest/readers-service.js';

export interface BenchPostgres {
  /** A URL with the rights to create and drop databases. */
  adminUrl: string;
  urlFor(db: string): string;
  /** The embedded server's data directory (its postmaster.pid names the server process); null for an external one. */
  dataDir: string | null;
  stop(): Promise<void>;
}

/**
 * The server at `externalUrl` when set (TEST_DATABASE_URL by default; the .mjs benchmarks pass
 * BENCH_DATABASE_URL), else an embedded PostgreSQL in a temporary directory.
 */
export async function benchPostgres(
  externalUrl: string | undefined = process.env.TEST_DATABASE_URL,
): Promise<BenchPostgres> {
  const external = externalUrl;
  if (external) {
    return {
      adminUrl: external,
      dataDir: null,
      urlFor(db) {
        const url = new URL(external);
        url.pathname = `/${db}`;
        return url.toString();
      },
      stop: async () => undefined,
    };
  }
  const dir = await mkdtemp(join(tmpdir(), 'tagtrail-bench-pg-'));
  let embedded = await startEmbeddedPostgres(dir);
  if (process.env.BENCH_PG_STATS) {
    // Statement statistics for profiling (BENCH_PG_STATS=1): the library loads at start only.
    await embedded.stop();
    await appendFile(
      join(dir, 'postgres', 'postgresql.auto.conf'),
      "shared_preload_libraries = 'pg_stat_statements'\npg_stat_statements.track = 'all'\npg_stat_statements.track_planning = on\n",
    );
    embedded = await startEmbeddedPostgres(dir);
  }
  return {
    adminUrl: embedded.adminUrl,
    urlFor: (db) => embedded.urlFor(db),
    dataDir: dir,
    async stop() {
      await embedded.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One statement on its own connection (CREATE/DROP DATABASE cannot run inside the pool's). */
export async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** The RFID tag of bench asset `a` (ASSET-a). */
export const epc = (a: number) => `E28011700000${a.toString(16).toUpperCase().padStart(12, '0')}`;

/**
 * One organization, `locations` locations (LOC-1..) and `assets` assets (ASSET-0..) with one
 * RFID tag each (epc), written in bulk SQL: the services would take minutes for 10,000 assets.
 * Returns the location ids in LOC order.
 */
export async function seedTaggedSite(
  db: Database,
  counts: { locations: number; assets: number },
): Promise<{ orgId: number; locations: number[] }> {
  const org = await db.pool.query<{ id: number }>(
    `INSERT INTO organizations (name) VALUES ('bench') RETURNING id`,
  );
  const orgId = org.rows[0]!.id;
  const locations = await db.pool.query<{ id: number }>(
    `INSERT INTO locations (org_id, external_key, name, valid_from)
     SELECT $1, 'LOC-' || i, 'Location ' || i, now() - interval '1 day' FROM generate_series(1, $2) i
     ORDER BY i RETURNING id`,
    [orgId, counts.locations],
  );
  await db.pool.query(
    `WITH a AS (
       INSERT INTO assets (org_id, external_key, name, valid_from)
       SELECT $1, 'ASSET-' || i, 'Asset ' || i, now() - interval '1 day' FROM generate_series(0, $2 - 1) i
       RETURNING id, (substring(external_key FROM 7))::int AS n)
     INSERT INTO tags (org_id, tag_type, value, asset_id) SELECT $1, 'rfid', v.value, a.id
     FROM a JOIN unnest($3::text[]) WITH ORDINALITY AS v(value, n) ON v.n = a.n + 1`,
    [orgId, counts.assets, Array.from({ length: counts.assets }, (_, a) => epc(a))],
  );
  // A running service has planner statistics for its tables; a fresh bulk load does not yet.
  await db.pool.query('ANALYZE');
  return { orgId, locations: locations.rows.map((r) => r.id) };
}

export interface BenchReaders {
  topics: string[];
  readerIds: number[];
  logins: Array<{ username: string; password: string }>;
}

/**
 * `count` generic-json readers on `${topicPrefix}/reader-<r>`, reader r's antennas 1..antennas
 * mapped onto locations[r * antennas ..], each topic served before this returns.
 */
export async function registerReaders(
  db: Database,
  ingest: { serving(topic: string): Promise<void> },
  site: { orgId: number; locations: number[] },
  options: { count: number; antennas: number; topicPrefix: string },
): Promise<BenchReaders> {
  const readers = new ReaderService(db);
  const caller = cliCaller(site.orgId);
  const out: BenchReaders = { topics: [], readerIds: [], logins: [] };
  for (let r = 0; r < options.count; r++) {
    const topic = `${options.topicPrefix}/reader-${r}`;
    const { reader, mqtt } = await readers.create(caller, {
      family: 'generic-json',
      identity: `reader-${r}`,
      topic,
    });
    for (let antenna = 1; antenna <= options.antennas; antenna++) {
      const locationId = site.locations[r * options.antennas + antenna - 1]!;
      await readers.addScanPoint(caller, reader.id, { antenna, locationId });
    }
    out.topics.push(topic);
    out.readerIds.push(reader.id);
    out.logins.push(mqtt);
    await ingest.serving(topic);
  }
  return out;
}

/** One MQTT connection per reader, logged in as it (the embedded broker requires it). */
export async function connectReaders(mqttUrl: string, readers: BenchReaders): Promise<MqttClient[]> {
  const clients: MqttClient[] = [];
  for (const login of readers.logins) {
    clients.push(
      await connectMqtt(mqttUrl, `${login.username}-bench`, {
        reconnectPeriod: 500,
        username: login.username,
        password: login.password,
      }),
    );
  }
  return clients;
}

/** How long the stored count may stand still, short of the total, before the bench gives up. */
const STALL_MS = 60_000;

/**
 * Polls until the readers' good_reads add up to `total`: every published read is stored.
 * `progress` hears the count every five seconds or so. Throws when the count has not moved
 * for a minute: reads that never come (an external broker dropped them) must not hang the bench.
 */
export async function waitForStoredReads(
  db: Database,
  readerIds: number[],
  total: number,
  progress?: (stored: number) => void,
): Promise<void> {
  let stored = 0;
  let lastReport = Date.now();
  let lastMove = Date.now();
  while (stored < total) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const { rows } = await db.pool.query<{ n: string }>(
      'SELECT coalesce(sum(good_reads), 0) AS n FROM readers WHERE id = ANY($1::bigint[])',
      [readerIds],
    );
    const count = Number(rows[0]!.n);
    if (count !== stored) lastMove = Date.now();
    stored = count;
    if (Date.now() - lastMove > STALL_MS) {
      throw new Error(
        `${stored} of ${total} reads stored, and none more for ${STALL_MS / 1000} s. With an ` +
          "external broker, check that it keeps what it queues for the service's consumer " +
          '(Mosquitto drops beyond max_queued_messages, 1000 by default; set it to 0).',
      );
    }
    if (progress && Date.now() - lastReport > 5000) {
      lastReport = Date.now();
      progress(stored);
    }
  }
}

/**
 * Waits until the event dispatcher (webhooks, live views) has taken every event off its
 * queue (migration 0055). Events are dispatched beside ingest, not in its transactions, so
 * a run is only done with its events dispatched: the dispatch's CPU is part of a read's cost.
 */
export async function waitForDispatch(db: Database, timeoutMs = 300_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.pool.query<{ queued: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM event_queue) AS queued',
    );
    if (!rows[0]!.queued) return;
    if (Date.now() > until) {
      throw new Error(`events still undispatched after ${timeoutMs / 1000} s: is the dispatcher running?`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Events not yet dispatched (the queue's length). */
export async function queuedEvents(db: Database): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM event_queue');
  return rows[0]!.n;
}

/**
 * An endpoint that wants asset.moved and asset.first_seen, filtered to a location no read
 * is at: every move is stored, queued and dispatched as an event, and no delivery is made
 * (the webhook bench measures those). Without one, moves are not stored at all.
 */
export async function subscribeToMoves(db: Database, orgId: number): Promise<void> {
  await db.pool.query(
    `WITH elsewhere AS (
       INSERT INTO locations (org_id, external_key, name, valid_from)
       VALUES ($1, 'BENCH-ELSEWHERE', 'Elsewhere', now()) RETURNING id
     )
     INSERT INTO webhook_endpoints (org_id, url, event_types, location_id, secret)
     SELECT $1, 'https://receiver.invalid/hook', '{asset.moved,asset.first_seen}', id, 'whsec_bench' FROM elsewhere`,
    [orgId],
  );
}

/**
 * A history of `perAsset` stays for every asset of the site, within the 20 hours before
 * `before` (the assets are effective from a day back), alternating between the asset's
 * first location of the run and the next one and ending at the first, with the positions
 * to match: what a site tracked for a while has, where a fresh database has nothing.
 */
export async function seedHistory(
  db: Database,
  site: { orgId: number; locations: number[] },
  perAsset: number,
  before: number,
): Promise<void> {
  const spacing = Math.floor((20 * 3600_000) / perAsset);
  await db.pool.query(
    `WITH a AS (SELECT id, (substring(external_key FROM 7))::int AS n FROM assets WHERE org_id = $1)
     INSERT INTO stays (org_id, asset_id, location_id, started_at, last_seen_at)
     SELECT $1, a.id, ($2::bigint[])[1 + (a.n + (($3 - 1 - h) % 2)) % cardinality($2::bigint[])],
            to_timestamp(($4::bigint - ($3 - h) * $5::bigint) / 1000.0),
            to_timestamp(($4::bigint - ($3 - h) * $5::bigint + $5::bigint / 2) / 1000.0)
     FROM a, generate_series(0, $3 - 1) h`,
    [site.orgId, site.locations, perAsset, before, spacing],
  );
  await db.pool.query(
    `INSERT INTO asset_positions (org_id, asset_id, location_id, last_seen_at)
     SELECT DISTINCT ON (asset_id) org_id, asset_id, location_id, last_seen_at FROM stays
     WHERE org_id = $1 ORDER BY asset_id, started_at DESC`,
    [site.orgId],
  );
  await db.pool.query('VACUUM ANALYZE stays');
  await db.pool.query('VACUUM ANALYZE asset_positions');
}
