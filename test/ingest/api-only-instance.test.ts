/**
 * TAGTRAIL_MQTT_CONSUME=false: an instance on an external broker (here a separate Aedes)
 * that takes no reader messages, beside one that does. What readers publish is stored by the
 * consuming instance alone, the other is ready without a broker connection and still takes
 * reader webhooks (docs/operations.md, "Running several instances").
 */
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedBroker, startEmbeddedBroker } from '../../src/ingest/broker.js';
import type { RunningService } from '../../src/runtime.js';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import { Scrape } from '../helpers/prometheus.js';
import { startTestService } from '../helpers/service.js';
import { genericJson, ingestFixture, iso, publisher, unique, waitFor } from './helpers.js';

const TOKEN = 'api-only-instance-metrics-token';

describe('an instance started with TAGTRAIL_MQTT_CONSUME=false', () => {
  let t: TestApp;
  let broker: EmbeddedBroker;
  let consuming: RunningService;
  let apiOnly: RunningService;
  const clients: MqttClient[] = [];
  let common: Record<string, string>;
  let consumerInstance: string;
  /** The consuming instance, under the same client id (and so broker session) every time. */
  const startConsuming = () => startTestService({ ...common, TAGTRAIL_INSTANCE: consumerInstance });

  beforeAll(async () => {
    t = await buildTestApp();
    broker = await startEmbeddedBroker({ host: '127.0.0.1', port: 0 });
    common = { DATABASE_URL: t.database.url, MQTT_URL: broker.url, TAGTRAIL_METRICS_TOKEN: TOKEN };
    consumerInstance = unique('consumer');
    consuming = await startConsuming();
    apiOnly = await startTestService({
      ...common,
      TAGTRAIL_INSTANCE: unique('api'),
      TAGTRAIL_MQTT_CONSUME: 'false',
    });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true).catch(() => undefined)));
    await apiOnly?.stop();
    await consuming?.stop();
    await broker?.stop();
    await t?.close();
  });

  it('keeps no consumer: /readyz is ready without a broker check, /metrics has no consumer series', async () => {
    expect(apiOnly.ingest.consumer).toBeUndefined();
    expect(consuming.ingest.consumer).toBeDefined();
    const ready = await fetch(`${apiOnly.url}/readyz`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { checks: Record<string, unknown> };
    expect(Object.keys(body.checks)).not.toContain('broker');
    const consumingReady = (await (await fetch(`${consuming.url}/readyz`)).json()) as {
      checks: Record<string, unknown>;
    };
    expect(Object.keys(consumingReady.checks)).toContain('broker');
    const scrape = async (s: RunningService) =>
      Scrape.parse(await (await fetch(`${s.url}/metrics`, { headers: bearer(TOKEN) })).text());
    expect((await scrape(apiOnly)).has('tagtrail_mqtt_consumer_connected')).toBe(false);
    expect((await scrape(consuming)).value('tagtrail_mqtt_consumer_connected')).toBe(1);
  });

  it('stores nothing while it runs alone; the consumer, back, stores every message once', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const tags = Array.from({ length: 20 }, (_, i) => `E2000000000000000000C${String(i).padStart(3, '0')}`);
    for (const tag of tags) await f.asset(tag);
    const { reader: r, topic } = await f.reader('generic-json', [[null, dock]]);
    await consuming.ingest.serving(topic);
    // The consumer's session (not clean) keeps its subscription while it is stopped, and the
    // broker keeps what is published to it.
    await consuming.stop();
    const client = await publisher(broker.url);
    clients.push(client);
    const now = Date.now();
    for (const [i, tag] of tags.entries()) {
      await client.publishAsync(topic, genericJson([[tag, 1, iso(now - 1000 + i)]]), { qos: 1 });
    }
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await f.readerCounters(r.id)).toEqual({ good: 0, bad: 0, unknown: 0 });
    expect(await f.rawMessages(r.id)).toHaveLength(0);

    consuming = await startConsuming();
    const counters = await waitFor(
      () => f.readerCounters(r.id),
      (c) => c.good === tags.length,
    );
    expect(counters).toEqual({ good: tags.length, bad: 0, unknown: 0 });
    expect(await f.rawMessages(r.id)).toHaveLength(tags.length);
  });

  it('still takes reader webhooks', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const asset = await f.asset('E2000000000000000000D001');
    const { reader: r, secret } = await f.reader('generic-json', [[null, dock]], { webhook: true });
    expect(secret).toBeTruthy();
    const body = genericJson([['E2000000000000000000D001', 1, iso(Date.now() - 500)]]);
    const res = await fetch(`${apiOnly.url}/ingest/v1/readers/${r.id}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
      body,
    });
    expect(res.status, await res.clone().text()).toBe(204);
    expect(res.headers.get('x-tagtrail-good-reads')).toBe('1');
    await waitFor(
      () => f.currentLocation(asset),
      (l) => l === dock,
    );
  });
});
