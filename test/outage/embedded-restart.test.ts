/**
 * Issue 9, item 3: the embedded PostgreSQL's postmaster killed outright (kill -9) under
 * load. The service, run as an operator runs it (`node dist/src/cli/main.js serve`, its own
 * process), restarts the server, answers 503 meanwhile and 2xx again after, never exits,
 * and loses no write it answered 201 for and no reader message its broker acknowledged.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/pool.js';
import { buildIfStale, postmasterPid, type ServiceProcess, spawnService } from '../helpers/compiled.js';
import {
  createTenant,
  reportFigures,
  startReaderLoad,
  startWriteLoad,
  storedMessages,
  type Tenant,
  until,
} from './load.js';
import { publishUntilStored } from './served.js';

let dataDir: string;
let service: ServiceProcess | undefined;
let db: Database | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'tagtrail-outage-embedded-'));
  await buildIfStale();
}, 180_000);

afterAll(async () => {
  await db?.close().catch(() => undefined);
  await service?.stop();
  // A server left behind by a failed run: stop the one in our own data directory only.
  const pid = await postmasterPid(dataDir);
  if (pid) {
    try {
      process.kill(pid, 'SIGINT');
    } catch {
      // already gone
    }
  }
  await rm(dataDir, { recursive: true, force: true });
}, 120_000);

/** The embedded server's URL for the service's database, from the data directory. */
async function embeddedUrl(): Promise<string> {
  const password = (await readFile(join(dataDir, 'postgres.password'), 'utf8')).trim();
  const port = (await readFile(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[3];
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/tagtrail`;
}

it('restarts a killed embedded PostgreSQL under load: 503 during, 2xx after, nothing acknowledged lost', {
  timeout: 300_000,
}, async () => {
  service = await spawnService({
    TAGTRAIL_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    TAGTRAIL_MQTT_PORT: '0',
    LOG_LEVEL: 'warn',
  });
  const mqttUrl = /MQTT broker \(embedded\) listening on (mqtt:\/\/\S+)/.exec(service.stderr())?.[1];
  expect(mqttUrl, service.stderr()).toBeDefined();
  const url = await embeddedUrl();
  const tenant: Tenant = await createTenant(url);
  db = createDatabase(url, { max: 2 });
  const database = db;
  // The broker passes on messages of topics it does not know yet: wait until it takes ours in.
  await publishUntilStored(
    mqttUrl as string,
    tenant.topic,
    () => storedMessages(database, tenant.readerId),
    tenant.mqtt,
  );

  const writes = startWriteLoad(service.url, tenant.token);
  let killedAt = 0;
  const reads = await startReaderLoad(mqttUrl as string, tenant.topic, { login: tenant.mqtt });
  try {
    await until(
      () => writes.created.length >= 10 && reads.acknowledged.length >= 5,
      'load before the outage',
    );
    const killed = await postmasterPid(dataDir);
    expect(killed).not.toBeNull();
    const acknowledgedBefore = reads.acknowledged.length;
    killedAt = Date.now();
    process.kill(killed as number, 'SIGKILL');

    await until(() => writes.answers.includes(503), 'a 503 during the outage');
    await until(
      () => writes.createdAfterOutage() >= 10 && reads.acknowledged.length >= acknowledgedBefore + 5,
      'writes and reader messages acknowledged again after the restart',
    );
    expect(await postmasterPid(dataDir)).not.toBe(killed);
  } finally {
    await writes.stop();
    await reads.stop();
  }

  const restarted = /"down_ms":(\d+)/.exec(service.stdout());
  reportFigures('embedded, kill -9 of the postmaster', writes, killedAt, {
    postgres_down_ms: Number(restarted?.[1]),
  });
  expect(service.exit, service.stderr()).toBeNull();
  expect(writes.unexpected).toEqual([]);
  // Every write answered 201 is there, under its name.
  const { rows } = await database.pool.query<{ id: number; name: string }>(
    'SELECT id, name FROM assets WHERE org_id = $1 AND id = ANY($2::bigint[])',
    [tenant.orgId, writes.created.map((c) => c.id)],
  );
  expect(new Map(rows.map((r) => [r.id, r.name]))).toEqual(
    new Map(writes.created.map((c) => [c.id, c.name])),
  );
  // Every reader message the broker acknowledged is in the raw log.
  const stored = await storedMessages(database, tenant.readerId);
  expect(reads.acknowledged.filter((p) => !stored.has(p))).toEqual([]);

  const ready = await fetch(`${service.url}/readyz`);
  expect(ready.status).toBe(200);
  // The service log names the crash and the restart.
  expect(service.stdout()).toContain('embedded PostgreSQL exited; restarting it');
  expect(service.stdout()).toContain('embedded PostgreSQL restarted; serving again');

  const pid = await postmasterPid(dataDir);
  expect(await service.stop()).toEqual({ code: 0, signal: null });
  service = undefined;
  // ...and its PostgreSQL stopped with it.
  expect(() => process.kill(pid as number, 0)).toThrow();
});
