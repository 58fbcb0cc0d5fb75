/**
 * `tagtrail serve` with TLS: SIGHUP reloads renewed certificates and the process keeps
 * serving; without TLS, SIGHUP has nothing to reload and the process keeps serving.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale, type ServiceProcess, spawnService } from '../helpers/compiled.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import {
  type CertificateFiles,
  fingerprintOf,
  selfSignedCertificate,
  servedFingerprint,
} from '../helpers/tls-certs.js';

let dir: string;
let database: TestDatabase;
let files: CertificateFiles;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tagtrail-https-serve-'));
  files = selfSignedCertificate(dir, 'first');
  [database] = await Promise.all([createTestDatabase(), buildIfStale()]);
}, 180_000);
afterAll(async () => {
  for (const service of services) await service.stop();
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

const env = (tls: boolean, host = '127.0.0.1') => ({
  DATABASE_URL: database.url,
  PORT: '0',
  HOST: host,
  TAGTRAIL_MQTT_PORT: '0',
  TAGTRAIL_DATA_DIR: dir,
  LOG_LEVEL: 'warn',
  ...(tls ? { TAGTRAIL_TLS_CERT: files.cert, TAGTRAIL_TLS_KEY: files.key } : {}),
});

const PLAIN_HTTP_WARNING = 'serving plain HTTP beyond this machine';

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('tagtrail serve with TLS', () => {
  it('reloads the certificate on SIGHUP and keeps serving', async () => {
    // On every interface, as a site runs it: with TLS there is nothing to warn of.
    const service = await spawnService(env(true, '0.0.0.0'));
    services.push(service);
    expect(service.url).toMatch(/^https:\/\/0\.0\.0\.0:\d+$/);
    const port = Number(new URL(service.url).port);
    expect(await servedFingerprint(port)).toBe(fingerprintOf(files.cert));

    selfSignedCertificate(dir, 'second', files);
    service.child.kill('SIGHUP');
    await until(() => service.stderr().includes('SIGHUP: https certificate reloaded'), 'the reload line');
    expect(await servedFingerprint(port)).toBe(fingerprintOf(files.cert));
    expect(service.exit).toBeNull();
    expect(await service.stop()).toEqual({ code: 0, signal: null });
    expect(service.stdout()).not.toContain(PLAIN_HTTP_WARNING);
  }, 120_000);

  it('warns at start when it serves plain HTTP beyond this machine, and not on loopback', async () => {
    const open = await spawnService(env(false, '0.0.0.0'));
    services.push(open);
    expect(await open.stop()).toEqual({ code: 0, signal: null });
    const warning = open
      .stdout()
      .split('\n')
      .filter((line) => line.includes(PLAIN_HTTP_WARNING))
      .map((line) => JSON.parse(line) as { level: number; host: string });
    expect(warning).toEqual([expect.objectContaining({ level: 40, host: '0.0.0.0' })]);
    const local = await spawnService(env(false));
    services.push(local);
    expect(await local.stop()).toEqual({ code: 0, signal: null });
    expect(local.stdout()).not.toContain(PLAIN_HTTP_WARNING);
  }, 120_000);

  it('without TLS, SIGHUP reloads nothing and the process keeps serving, then stops cleanly', async () => {
    const service = await spawnService(env(false));
    services.push(service);
    expect(service.url).toMatch(/^http:\/\//);
    service.child.kill('SIGHUP');
    await until(
      () => service.stderr().includes('SIGHUP: nothing to reload (no TLS listener)'),
      'the reload line',
    );
    expect(service.exit).toBeNull();
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    expect(await service.stop()).toEqual({ code: 0, signal: null });
  }, 120_000);
});
