/**
 * TAGTRAIL_PUBLIC_URL on the running service (docs/operations.md "Public address"): unset,
 * links point at the address the service announces and a service reachable beyond this
 * machine or behind a proxy warns once at start; a bad value stops the start with the reason.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale, childEnv, MAIN, run, type ServiceProcess, spawnService } from '../helpers/compiled.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let dir: string;
let database: TestDatabase;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tagtrail-public-url-'));
  [database] = await Promise.all([createTestDatabase(), buildIfStale()]);
}, 180_000);
afterAll(async () => {
  for (const service of services) await service.stop();
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

const env = (host: string, publicUrl?: string, proxied = false) => ({
  DATABASE_URL: database.url,
  PORT: '0',
  HOST: host,
  TAGTRAIL_MQTT_PORT: '0',
  TAGTRAIL_DATA_DIR: dir,
  LOG_LEVEL: 'warn',
  ...(publicUrl ? { TAGTRAIL_PUBLIC_URL: publicUrl } : {}),
  ...(proxied ? { TAGTRAIL_TRUST_PROXY: 'true' } : {}),
});

const WARNING = 'TAGTRAIL_PUBLIC_URL is not set';

async function warnings(host: string, publicUrl?: string, proxied = false) {
  const service = await spawnService(env(host, publicUrl, proxied));
  services.push(service);
  const port = new URL(service.url).port;
  expect(await service.stop()).toEqual({ code: 0, signal: null });
  const lines = service
    .stdout()
    .split('\n')
    .filter((line) => line.includes(WARNING))
    .map((line) => JSON.parse(line) as { level: number; links: string });
  return { lines, port };
}

describe('TAGTRAIL_PUBLIC_URL at start', () => {
  it('unset on every interface: warns once, naming where links point (localhost, the port served)', async () => {
    const { lines, port } = await warnings('0.0.0.0');
    expect(lines).toEqual([expect.objectContaining({ level: 40, links: `http://localhost:${port}` })]);
  }, 120_000);

  it('unset behind a proxy (TAGTRAIL_TRUST_PROXY), even on loopback: warns once', async () => {
    const { lines, port } = await warnings('127.0.0.1', undefined, true);
    expect(lines).toEqual([expect.objectContaining({ level: 40, links: `http://127.0.0.1:${port}` })]);
  }, 120_000);

  it('set, or on loopback without a proxy: no warning', async () => {
    expect((await warnings('0.0.0.0', 'https://tagtrail.example.com')).lines).toEqual([]);
    expect((await warnings('127.0.0.1')).lines).toEqual([]);
  }, 120_000);

  it('a value with a path refuses to start, saying why', async () => {
    const result = await run(
      process.execPath,
      [MAIN, 'serve'],
      childEnv(env('127.0.0.1', 'https://example.com/tagtrail')),
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      'TAGTRAIL_PUBLIC_URL="https://example.com/tagtrail": must not have a path: the web app is served at the root',
    );
  }, 120_000);
});
