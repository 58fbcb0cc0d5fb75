/**
 * `tagtrail serve` with TAGTRAIL_SHUTDOWN_DRAIN_SECONDS, run as an operator runs it (the
 * compiled CLI in its own process, real signals, real HTTP): the first SIGTERM starts the
 * drain, in which /readyz answers 503 and the API serves with `Connection: close`; the stop
 * follows the drain, and a second signal during the drain stops cleanly at once. The
 * default (no drain) is test/foundation/serve-signals.test.ts and runtime-drain.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { buildIfStale, type ServiceProcess, spawnService } from '../helpers/compiled.js';
import { rawRequest, requestBytes } from '../helpers/raw-http.js';

let t: TestApp;
let token: string;
const dirs: string[] = [];

beforeAll(async () => {
  [t] = await Promise.all([buildTestApp(), buildIfStale()]);
  token = (await (await t.createOrg('Drain Depot')).key(['assets:read'])).token;
}, 180_000);
afterAll(async () => {
  await t?.close();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function serve(drainSeconds: number): Promise<ServiceProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'tagtrail-drain-'));
  dirs.push(dir);
  return spawnService({
    DATABASE_URL: t.database.url,
    TAGTRAIL_DATA_DIR: dir,
    PORT: '0',
    HOST: '127.0.0.1',
    TAGTRAIL_MQTT_PORT: '0',
    LOG_LEVEL: 'warn',
    TAGTRAIL_SHUTDOWN_DRAIN_SECONDS: String(drainSeconds),
  });
}

/** Resolves once the service's standard error contains `text`; fails with it after `timeoutMs`. */
async function said(service: ServiceProcess, text: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!service.stderr().includes(text)) {
    if (Date.now() > deadline || service.exit) {
      throw new Error(`the service did not say ${JSON.stringify(text)}:\n${service.stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The process's exit, waited for up to `timeoutMs` (then killed, and the test fails). */
async function exit(service: ServiceProcess, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!service.exit && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  if (!service.exit) {
    service.child.kill('SIGKILL');
    throw new Error(`the service did not exit within ${timeoutMs} ms:\n${service.stderr()}`);
  }
  return service.exit;
}

const portOf = (service: ServiceProcess) => Number(new URL(service.url).port);
const readyz = (service: ServiceProcess) =>
  rawRequest(portOf(service), requestBytes('GET /readyz HTTP/1.1'), { closeWithinMs: 500 });
const orgsMe = (service: ServiceProcess) =>
  rawRequest(
    portOf(service),
    requestBytes('GET /api/v1/orgs/me HTTP/1.1', { authorization: `Bearer ${token}` }),
    {
      closeWithinMs: 500,
    },
  );

describe('tagtrail serve with a shutdown drain', () => {
  it('on SIGTERM drains for the time set, /readyz 503 and the API serving with Connection: close, then stops', async () => {
    const service = await serve(3);
    try {
      expect((await readyz(service)).status).toBe(200);
      const signalled = Date.now();
      service.child.kill('SIGTERM');
      await said(service, 'SIGTERM: draining for 3 s');
      const ready = await readyz(service);
      expect(ready.status, ready.body).toBe(503);
      expect(ready.json).toEqual({ status: 'not_ready', checks: { shutdown: 'draining' } });
      const me = await orgsMe(service);
      expect(me.status, me.body).toBe(200);
      expect(me.headers.connection).toBe('close');
      expect(me.closed).toBe(true);
      expect(service.exit).toBeNull();

      const ended = await exit(service, 60_000);
      expect(ended, service.stderr()).toEqual({ code: 0, signal: null });
      expect(Date.now() - signalled).toBeGreaterThanOrEqual(3_000);
      expect(service.stderr()).toContain('drained: stopping');
    } finally {
      await service.stop(5_000);
    }
  }, 120_000);

  it('a second signal during the drain ends it and stops cleanly at once', async () => {
    const service = await serve(120);
    try {
      service.child.kill('SIGTERM');
      await said(service, 'SIGTERM: draining for 120 s');
      expect((await readyz(service)).status).toBe(503);
      const cut = Date.now();
      service.child.kill('SIGINT');
      const ended = await exit(service, 60_000);
      expect(ended, service.stderr()).toEqual({ code: 0, signal: null });
      expect(Date.now() - cut).toBeLessThan(60_000);
      expect(service.stderr()).toContain('SIGINT: drain cut short; stopping');
      expect(service.stderr()).not.toContain('drained: stopping');
    } finally {
      await service.stop(5_000);
    }
  }, 120_000);
});
