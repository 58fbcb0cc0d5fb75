/**
 * The webhook series of GET /metrics (docs/metrics.md, "Webhooks"), read back through a
 * Prometheus text-format parser: every outcome a worker records, counted by result once its
 * transaction committed (never one left unrecorded because its lease ran out, never twice
 * for a recording run again after a deadlock), and every attempt's duration by whether the
 * receiver answered 2xx. The sends go through the events runtime the service composes.
 */
import type { QueryResultRow } from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/pool.js';
import { DEFAULT_DELIVERY_POLICY, DeliveryWorker } from '../../src/events/delivery-worker.js';
import { dispatchEvents } from '../../src/events/dispatcher.js';
import { WebhookService } from '../../src/events/webhook-service.js';
import { ServiceMetrics } from '../../src/metrics/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, insertOrganization, type TestDatabase } from '../helpers/database.js';
import { Scrape } from '../helpers/prometheus.js';
import { TEST_SECRETS } from '../helpers/secrets.js';
import { waitFor } from '../ingest/helpers.js';
import { startReceiver } from './receiver.js';

const SENDS = 'tagtrail_webhook_sends_total';
const DURATION = 'tagtrail_webhook_send_duration_seconds';

/** What the series say, and the difference between two readings. */
interface Reading {
  delivered: number;
  retry: number;
  failed: number;
  stale: number;
  /** Attempts observed, with a 2xx and without, and their seconds. */
  ok: { count: number; sum: number };
  notOk: { count: number; sum: number };
}

async function read(metrics: ServiceMetrics): Promise<Reading> {
  const scrape = await Scrape.parse(await metrics.registry.metrics());
  expect(scrape.type(SENDS)).toBe('counter');
  expect(scrape.type(DURATION)).toBe('histogram');
  return {
    delivered: scrape.value(SENDS, { result: 'delivered' }),
    retry: scrape.value(SENDS, { result: 'retry' }),
    failed: scrape.value(SENDS, { result: 'failed' }),
    stale: scrape.value(SENDS, { result: 'stale' }),
    ok: scrape.histogram(DURATION, { ok: 'true' }),
    notOk: scrape.histogram(DURATION, { ok: 'false' }),
  };
}

function since(before: Reading, after: Reading): Reading {
  return {
    delivered: after.delivered - before.delivered,
    retry: after.retry - before.retry,
    failed: after.failed - before.failed,
    stale: after.stale - before.stale,
    ok: { count: after.ok.count - before.ok.count, sum: after.ok.sum - before.ok.sum },
    notOk: { count: after.notOk.count - before.notOk.count, sum: after.notOk.sum - before.notOk.sum },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('webhook send metrics', () => {
  let t: TestApp;
  const closers: Array<() => Promise<void>> = [];

  const q = <T extends object = Record<string, unknown>>(sql: string, params: unknown[] = []) =>
    t.database.db.pool.query<T & QueryResultRow>(sql, params).then((r) => r.rows);

  beforeAll(async () => {
    t = await buildTestApp({
      allowPrivateWebhooks: true,
      // A failed attempt's retry is ten minutes off: none comes within the test.
      events: {
        dispatchPollMs: 20,
        delivery: { retryBaseMs: 600_000, retryMaxMs: 600_000, timeoutMs: 2_000, pollMs: 25 },
      },
    });
    t.services.internal.events.start((err) => console.error(err));
  });
  afterAll(async () => {
    await t?.services.internal.events.stop();
    for (const close of closers) await close();
    await t?.close();
  });

  /**
   * An endpoint answering with `answer`, and one event for it; the series as they were
   * before the event.
   */
  async function oneEvent(answer: Parameters<typeof startReceiver>[0]) {
    const rx = await startReceiver(answer);
    closers.push(rx.close);
    const org = await t.createOrg();
    const { endpoint } = await t.services.internal.webhooks.create(org.id, {
      url: rx.url,
      event_types: ['asset.created'],
    });
    const before = await read(t.services.metrics);
    await q(
      `INSERT INTO events (org_id, type, occurred_at, subject, payload)
       VALUES ($1, 'asset.created', now(), 'asset:' || $2, '{}')`,
      [org.id, endpoint.id],
    );
    const delivery = async () =>
      (
        await q<{ state: string; attempts: number }>(
          'SELECT state, attempts FROM webhook_deliveries WHERE endpoint_id = $1',
          [endpoint.id],
        )
      )[0];
    const change = async () => since(before, await read(t.services.metrics));
    return { rx, endpointId: endpoint.id, delivery, change };
  }

  it('counts a 2xx as delivered and observes its duration with ok="true"', async () => {
    const { change, delivery } = await oneEvent(async () => {
      await sleep(60);
      return 204;
    });
    const counted = await waitFor(change, (c) => c.delivered > 0);
    expect(await delivery()).toEqual({ state: 'delivered', attempts: 1 });
    expect(counted).toMatchObject({ delivered: 1, retry: 0, failed: 0, stale: 0, notOk: { count: 0 } });
    expect(counted.ok.count).toBe(1);
    // The receiver's 60 ms are in it, and it ended well within the attempt's bound.
    expect(counted.ok.sum).toBeGreaterThanOrEqual(0.05);
    expect(counted.ok.sum).toBeLessThan(2);
  });

  it('counts a 500 as retry and observes its duration with ok="false"', async () => {
    const { change, delivery } = await oneEvent(() => 500);
    const counted = await waitFor(change, (c) => c.retry > 0);
    expect(await delivery()).toEqual({ state: 'pending', attempts: 1 });
    expect(counted).toMatchObject({ delivered: 0, retry: 1, failed: 0, stale: 0, ok: { count: 0 } });
    expect(counted.notOk.count).toBe(1);
  });

  it('counts the last attempt, past the retry window, as failed', async () => {
    const { change, delivery, endpointId } = await oneEvent(() => 500);
    await waitFor(change, (c) => c.retry > 0);
    // A day after it was created, its retry due now: the next attempt is its last.
    await q(
      `UPDATE webhook_deliveries SET created_at = now() - interval '25 hours', next_attempt_at = now()
       WHERE endpoint_id = $1`,
      [endpointId],
    );
    const counted = await waitFor(change, (c) => c.failed > 0);
    expect(await delivery()).toEqual({ state: 'failed', attempts: 2 });
    expect(counted).toMatchObject({ delivered: 0, retry: 1, failed: 1, stale: 0, ok: { count: 0 } });
    expect(counted.notOk.count).toBe(2);
  });

  it('counts an outcome that arrives after the lease ran out as stale, not delivered', async () => {
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    let arrived = false;
    const { change, delivery, endpointId } = await oneEvent(async () => {
      arrived = true;
      await answered;
      return 204;
    });
    await waitFor(
      async () => arrived,
      (a) => a,
    );
    // While the receiver holds the send, the lease runs out and another instance claims it.
    await q(`UPDATE webhook_deliveries SET leased_until = now() + interval '1 hour' WHERE endpoint_id = $1`, [
      endpointId,
    ]);
    answer();
    const counted = await waitFor(change, (c) => c.stale > 0);
    // Nothing written: the delivery is the other instance's to record.
    expect(await delivery()).toEqual({ state: 'pending', attempts: 0 });
    expect(counted).toMatchObject({ delivered: 0, retry: 0, failed: 0, stale: 1, notOk: { count: 0 } });
    // The send did happen, and got its 2xx.
    expect(counted.ok.count).toBe(1);
  });
});

describe('a recording run again after a deadlock', () => {
  let database: TestDatabase;
  let worker: DeliveryWorker | undefined;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    await worker?.stop();
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await database?.drop();
  });

  it('counts its outcomes once, from the run that committed', async () => {
    const rx = await startReceiver();
    closers.push(rx.close);
    const orgId = await insertOrganization(database.db, 'Deadlocked recording');
    const webhooks = new WebhookService(database.db, TEST_SECRETS, { allowPrivate: true });
    await webhooks.create(orgId, { url: rx.url, event_types: ['asset.created'] });
    await database.db.pool.query(
      `INSERT INTO events (org_id, type, occurred_at, subject, payload)
       VALUES ($1, 'asset.created', now(), 'asset:1', '{}')`,
      [orgId],
    );
    await dispatchEvents(database.db);
    // The worker's first transaction that writes a delivery's outcome is aborted by the
    // server as a deadlock's victim after its work, and run again (src/db/transaction.ts).
    let aborted = false;
    const db: Database = {
      ...database.db,
      system: (fn) =>
        database.db.system(async (tx) => {
          const result = await fn(tx);
          const { rows } = await tx.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'delivered'",
          );
          if (!aborted && rows[0]!.n > 0) {
            aborted = true;
            await tx.query(`DO $$ BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END $$`);
          }
          return result;
        }),
    };
    const metrics = new ServiceMetrics({ processMetrics: false });
    const before = await read(metrics);
    worker = new DeliveryWorker(
      db,
      TEST_SECRETS,
      { ...DEFAULT_DELIVERY_POLICY, allowPrivate: true, pollMs: 25 },
      (err) => console.error(err),
      metrics.webhooks,
    );
    worker.start();
    await waitFor(
      async () =>
        (await database.db.pool.query("SELECT 1 FROM webhook_deliveries WHERE state = 'delivered'")).rowCount,
      (n) => n === 1,
    );
    // Stopping waits for the recording and what follows its commit.
    await worker.stop();
    expect(aborted).toBe(true);
    expect(database.db.stats.transientConflictRetries).toBe(1);
    expect(since(before, await read(metrics))).toMatchObject({
      delivered: 1,
      retry: 0,
      failed: 0,
      stale: 0,
      ok: { count: 1 },
    });
  });
});
