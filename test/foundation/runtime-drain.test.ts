/**
 * RunningService.drain (TAGTRAIL_SHUTDOWN_DRAIN_SECONDS) on the whole service in this
 * process: real HTTP, the embedded broker, the test's PostgreSQL. 0 is no drain at all; a
 * drain turns /readyz 503 while the API and ingest serve; it ends after its time without
 * stopping anything, or at once when `stop()` comes first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import type { RunningService } from '../../src/runtime.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { rawRequest, requestBytes } from '../helpers/raw-http.js';
import { startTestService } from '../helpers/service.js';
import { genericJson, publisher, unique } from '../ingest/helpers.js';

let t: TestApp;
let org: { id: number; token: string };

beforeAll(async () => {
  t = await buildTestApp();
  const created = await t.createOrg('Drain Depot');
  org = { id: created.id, token: (await created.key(['assets:read'])).token };
}, 60_000);
afterAll(() => t?.close());

function start(env: Record<string, string> = {}): Promise<RunningService> {
  return startTestService({ DATABASE_URL: t.database.url, ...env });
}

const portOf = (running: RunningService) => Number(new URL(running.url).port);
const get = (running: RunningService, path: string, headers: Record<string, string> = {}) =>
  rawRequest(portOf(running), requestBytes(`GET ${path} HTTP/1.1`, headers), { closeWithinMs: 500 });
const orgsMe = (running: RunningService) =>
  get(running, '/api/v1/orgs/me', { authorization: `Bearer ${org.token}` });

describe('RunningService.drain', () => {
  it('with TAGTRAIL_SHUTDOWN_DRAIN_SECONDS unset, resolves at once and changes nothing', async () => {
    const running = await start();
    try {
      const began = Date.now();
      await running.drain();
      expect(Date.now() - began).toBeLessThan(500);
      const ready = await get(running, '/readyz');
      expect(ready.status, ready.body).toBe(200);
      const me = await orgsMe(running);
      expect(me.status, me.body).toBe(200);
      expect(me.headers.connection).toBe('keep-alive');
      expect(me.closed).toBe(false);
    } finally {
      await running.stop();
    }
  }, 60_000);

  it('turns /readyz 503 while the API and ingest serve, until stop() cuts it short', async () => {
    const running = await start({ TAGTRAIL_SHUTDOWN_DRAIN_SECONDS: '300' });
    const created = await t.services.readers.create(cliCaller(org.id), {
      family: 'generic-json',
      identity: unique('reader'),
      topic: unique('site/drain'),
    });
    await running.ingest.serving(created.reader.topic);
    const reader = await publisher(running.mqttUrl, { login: created.mqtt });
    let drained = false;
    try {
      const drain = running.drain().then(() => {
        drained = true;
      });
      const ready = await get(running, '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.json).toEqual({ status: 'not_ready', checks: { shutdown: 'draining' } });
      const me = await orgsMe(running);
      expect(me.status, me.body).toBe(200);
      expect(me.headers.connection).toBe('close');
      expect(me.closed).toBe(true);
      // The embedded broker acknowledges a QoS 1 message only once it is stored.
      await reader.publishAsync(created.reader.topic, genericJson([['E2000000000000000000D001', 1, null]]), {
        qos: 1,
      });
      const stored = await t.database.db.pool.query(
        'SELECT count(*)::int AS n FROM raw_log WHERE org_id = $1',
        [org.id],
      );
      expect(stored.rows[0].n).toBe(1);
      expect(drained).toBe(false);

      const stopping = Date.now();
      await running.stop();
      await drain;
      expect(drained).toBe(true);
      expect(Date.now() - stopping).toBeLessThan(30_000);
      await expect(get(running, '/healthz')).rejects.toThrow();
    } finally {
      await reader.endAsync(true).catch(() => undefined);
      await running.stop();
    }
  }, 60_000);

  it('ends after the time set, still serving: the stop is the caller’s', async () => {
    const running = await start({ TAGTRAIL_SHUTDOWN_DRAIN_SECONDS: '1' });
    try {
      const began = Date.now();
      await running.drain();
      expect(Date.now() - began).toBeGreaterThanOrEqual(990);
      expect((await get(running, '/readyz')).status).toBe(503);
      expect((await orgsMe(running)).status).toBe(200);
    } finally {
      await running.stop();
    }
  }, 60_000);
});
