/**
 * GET /metrics of a service consuming an external broker (MQTT_URL, here a separate Aedes):
 * the consumer's connection is a series, the embedded broker's readers are not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedBroker, startEmbeddedBroker } from '../../src/ingest/broker.js';
import type { RunningService } from '../../src/runtime.js';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import { Scrape } from '../helpers/prometheus.js';
import { startTestService } from '../helpers/service.js';
import { unique, waitFor } from '../ingest/helpers.js';

const TOKEN = 'external-broker-metrics-token';

describe('GET /metrics with an external broker', () => {
  let t: TestApp;
  let broker: EmbeddedBroker | undefined;
  let running: RunningService;

  const scrape = async () => {
    const res = await fetch(`${running.url}/metrics`, { headers: bearer(TOKEN) });
    expect(res.status).toBe(200);
    return Scrape.parse(await res.text());
  };

  beforeAll(async () => {
    t = await buildTestApp();
    broker = await startEmbeddedBroker({ host: '127.0.0.1', port: 0 });
    running = await startTestService({
      DATABASE_URL: t.database.url,
      MQTT_URL: broker.url,
      TAGTRAIL_INSTANCE: unique('metrics'),
      TAGTRAIL_METRICS_TOKEN: TOKEN,
    });
  });
  afterAll(async () => {
    await running?.stop();
    await broker?.stop();
    await t?.close();
  });

  it('reports the consumer connected, not while the broker is gone, and again once it is back', async () => {
    const up = await waitFor(
      () => scrape(),
      (s) => s.value('tagtrail_mqtt_consumer_connected') === 1,
    );
    expect(up.type('tagtrail_mqtt_consumer_connected')).toBe('gauge');
    expect(up.has('tagtrail_broker_connected_readers')).toBe(false);
    const port = broker!.port;
    await broker!.stop();
    broker = undefined;
    const down = await waitFor(
      () => scrape(),
      (s) => s.has('tagtrail_mqtt_consumer_connected') && s.value('tagtrail_mqtt_consumer_connected') === 0,
    );
    expect(down.has('tagtrail_broker_connected_readers')).toBe(false);
    // The broker back on its port: the consumer reconnects and the series says so.
    broker = await startEmbeddedBroker({ host: '127.0.0.1', port });
    await waitFor(
      () => scrape(),
      (s) => s.value('tagtrail_mqtt_consumer_connected') === 1,
    );
  });
});
