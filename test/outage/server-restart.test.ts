/**
 * Issue 9, item 3: `pg_ctl restart` of the PostgreSQL named by DATABASE_URL under load: a
 * private server the test starts itself (never the machine's shared one). The service, in
 * its own process, stays up, answers 503 during the restart and 2xx within seconds after,
 * and loses no write it answered 201 for and no reader message: readers publish to the
 * broker named by MQTT_URL (the machine's Mosquitto in CI, else one started here), and the
 * service's consumer acknowledges a message to that broker only once it is stored.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/pool.js';
import { type EmbeddedBroker, startEmbeddedBroker } from '../../src/ingest/broker.js';
import { consumerClientId } from '../../src/ingest/transport.js';
import { buildIfStale, type ServiceProcess, spawnService } from '../helpers/compiled.js';
import { type PrivatePostgres, startPrivatePostgres } from '../helpers/private-postgres.js';
import { discardSession } from '../ingest/helpers.js';
import {
  createTenant,
  reportFigures,
  startReaderLoad,
  startWriteLoad,
  storedMessages,
  type Tenant,
  unique,
  until,
} from './load.js';
import { publishUntilStored } from './served.js';

let server: PrivatePostgres | undefined;
let broker: EmbeddedBroker | undefined;
let mqttUrl: string;
let dataDir: string;
let service: ServiceProcess | undefined;
let db: Database | undefined;
const instance = unique('outage');

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'tagtrail-outage-server-'));
  const external = inject('mqttUrl');
  if (external) {
    mqttUrl = external;
  } else {
    broker = await startEmbeddedBroker({ host: '127.0.0.1', port: 0 });
    mqttUrl = broker.url;
  }
  [server] = await Promise.all([startPrivatePostgres(), buildIfStale()]);
  const admin = new pg.Client({ connectionString: server.urlFor('postgres') });
  await admin.connect();
  await admin.query('CREATE DATABASE tagtrail');
  await admin.end();
}, 180_000);

afterAll(async () => {
  await db?.close().catch(() => undefined);
  await service?.stop();
  // The consumer's persistent session would stay on a shared broker.
  if (!broker) await discardSession(mqttUrl, consumerClientId(instance)).catch(() => undefined);
  await broker?.stop();
  await server?.destroy();
  await rm(dataDir, { recursive: true, force: true });
}, 120_000);

it('stays up through pg_ctl restart of its DATABASE_URL under load: 503 during, 2xx after, nothing acknowledged lost', {
  timeout: 300_000,
}, async () => {
  const url = (server as PrivatePostgres).urlFor('tagtrail');
  service = await spawnService({
    DATABASE_URL: url,
    MQTT_URL: mqttUrl,
    TAGTRAIL_INSTANCE: instance,
    TAGTRAIL_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
  });
  const tenant: Tenant = await createTenant(url);
  db = createDatabase(url, { max: 2 });
  const database = db;
  // Until the consumer subscribes to the new reader's topic, the broker drops its messages.
  await publishUntilStored(mqttUrl, tenant.topic, () => storedMessages(database, tenant.readerId));

  const writes = startWriteLoad(service.url, tenant.token);
  let restartAt = 0;
  let restartedAt = 0;
  const reads = await startReaderLoad(mqttUrl, tenant.topic);
  try {
    await until(
      () => writes.created.length >= 10 && reads.acknowledged.length >= 5,
      'load before the restart',
    );
    const before = writes.answers.length;
    restartAt = Date.now();
    await (server as PrivatePostgres).restart();
    restartedAt = Date.now();
    await until(() => writes.answers.slice(before).includes(503), 'a 503 during the restart');
    await until(() => writes.createdAfterOutage() >= 10, 'writes answered 201 again after the restart');
  } finally {
    await writes.stop();
    await reads.stop();
  }

  reportFigures('DATABASE_URL, pg_ctl restart -m fast', writes, restartAt, {
    pg_ctl_restart_ms: restartedAt - restartAt,
  });
  expect(service.exit, service.stderr()).toBeNull();
  expect(writes.unexpected).toEqual([]);
  const { rows } = await database.pool.query<{ id: number; name: string }>(
    'SELECT id, name FROM assets WHERE org_id = $1 AND id = ANY($2::bigint[])',
    [tenant.orgId, writes.created.map((c) => c.id)],
  );
  expect(new Map(rows.map((r) => [r.id, r.name]))).toEqual(
    new Map(writes.created.map((c) => [c.id, c.name])),
  );
  // The broker acknowledged these to the reader; the consumer must have stored every one,
  // including those that arrived while the database was restarting.
  let missing: string[] = [];
  await until(async () => {
    const stored = await storedMessages(database, tenant.readerId);
    missing = reads.acknowledged.filter((p) => !stored.has(p));
    return missing.length === 0;
  }, 'every acknowledged reader message stored').catch((err: Error) => {
    throw new Error(`${err.message}: ${missing.length} of ${reads.acknowledged.length} missing`);
  });

  expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
  expect(await service.stop()).toEqual({ code: 0, signal: null });
  service = undefined;
});
